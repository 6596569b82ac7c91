//! Random graph-file attributes for each op, valid and invalid.

use std::collections::BTreeMap;

use ragtime_graph::Attr;

use crate::rng::{Rng, EXTREME_INTS};
use crate::values::{random_dtype, STRINGS};

/// The attributes each op reads (from the conformance README and the ops' `from_attrs`).
fn attr_names(name: &str) -> &'static [&'static str] {
    match name {
        "cast" => &["dtype"],
        "reduce_sum" | "reduce_mean" | "reduce_max" | "reduce_min" | "reduce_prod" | "reduce_all" | "reduce_any" => {
            &["axis", "keepdims"]
        }
        "concat" | "stack" | "row_lengths" => &["axis"],
        "gather" => &["axis", "batch_dims"],
        "reverse" => &["axis"],
        "tile" => &["multiples"],
        "getitem" => &["key"],
        "unsorted_segment_sum"
        | "unsorted_segment_max"
        | "unsorted_segment_min"
        | "unsorted_segment_prod"
        | "unsorted_segment_mean"
        | "unsorted_segment_sqrt_n" => &["num_segments"],
        "reduce_variance" | "reduce_std" | "reduce_logsumexp" | "reduce_euclidean_norm" => &["axis", "keepdims"],
        "argmax" | "argmin" => &["axis", "output_type"],
        "one_hot" => &["depth", "on_value", "off_value", "dtype"],
        "expand_dims" => &["axis"],
        "merge_dims" => &["outer_axis", "inner_axis"],
        "size" => &["out_type"],
        "bounding_shape" => &["axis", "out_type"],
        "ones_like" | "zeros_like" => &["dtype"],
        "ragged.segment_ids_to_row_splits" => &["num_segments", "out_type"],
        "from_value_rowids" => &["nrows"],
        "from_uniform_row_length" => &["uniform_row_length", "nrows"],
        "to_tensor" => &["default_value", "shape"],
        "strings.split" => &["sep", "maxsplit"],
        "strings.substr" => &["pos", "len", "unit"],
        "strings.join" => &["separator"],
        "strings.reduce_join" => &["axis", "separator", "keepdims"],
        "strings.length" => &["unit"],
        "strings.to_hash_bucket_fast" | "strings.to_hash_bucket" => &["num_buckets"],
        "strings.to_hash_bucket_strong" => &["num_buckets", "key"],
        "strings.lookup" => &["vocab", "num_oov_buckets"],
        "strings.unicode_encode" => &["output_encoding", "errors", "replacement_char"],
        "strings.regex_full_match" => &["pattern"],
        "strings.to_number" => &["out_type"],
        "strings.regex_replace" => &["pattern", "rewrite", "replace_global"],
        "strings.unicode_decode" | "strings.unicode_split" => &["input_encoding", "errors", "replacement_char"],
        "ragged.cross_hashed" => &["num_buckets", "hash_key"],
        "from_tensor" => &["padding", "ragged_rank"],
        "strings.ngrams" => &["ngram_width", "separator", "pad_values", "padding_width", "preserve_short_sequences"],
        "softmax" | "log_softmax" => &["axis"],
        "cumsum" | "cumprod" => &["axis", "exclusive", "reverse"],
        "sort" => &["axis", "direction"],
        "argsort" => &["axis", "direction", "stable"],
        "top_k" => &["k"],
        _ => &[],
    }
}

/// An attribute of the wrong kind.
fn wrong_kind(rng: &mut Rng) -> Attr {
    match rng.below(6) {
        0 => Attr::Null,
        1 => Attr::Bool(true),
        2 => Attr::Float(1.5),
        3 => Attr::Str("1".into()),
        4 => Attr::List(vec![Attr::Int(1), Attr::Str("x".into())]),
        _ => Attr::List(vec![]),
    }
}

/// An integer attribute: mostly in `lo..=hi`, sometimes extreme, sometimes of the wrong kind.
fn int_attr(rng: &mut Rng, lo: i64, hi: i64) -> Attr {
    match rng.below(20) {
        0 => wrong_kind(rng),
        1 | 2 => Attr::Int(*rng.pick(EXTREME_INTS)),
        _ => Attr::Int(rng.range(lo, hi)),
    }
}

/// A list of integer attributes, mostly `rank` long (the rank of the op's first input).
fn int_list_attr(rng: &mut Rng, rank: usize, lo: i64, hi: i64) -> Attr {
    let len = if rng.chance(0.7) { rank } else { rng.below(5) };
    Attr::List((0..len).map(|_| int_attr(rng, lo, hi)).collect())
}

fn string_attr(rng: &mut Rng) -> Attr {
    if rng.chance(0.05) {
        return wrong_kind(rng);
    }
    let s = *rng.pick(&[" ", "", ",", "ab", "\u{e9}", "<>", "  ", "\0"]);
    Attr::Str(s.to_string())
}

fn scalar_attr(rng: &mut Rng) -> Attr {
    match rng.below(7) {
        0 => Attr::Int(rng.range(-2, 5)),
        1 => Attr::Int(*rng.pick(EXTREME_INTS)),
        2 => Attr::Float(*rng.pick(&[0.5, -1.0, f64::NAN, f64::INFINITY, 1e300])),
        3 => Attr::Bool(rng.chance(0.5)),
        4 => Attr::Str(String::from_utf8_lossy(rng.pick::<&[u8]>(STRINGS)).into_owned()),
        5 => Attr::Null,
        _ => wrong_kind(rng),
    }
}

/// One item of a `getitem` key in Python syntax, valid or not.
fn key_item(rng: &mut Rng) -> String {
    let bound = |rng: &mut Rng| -> String {
        match rng.below(8) {
            0 | 1 => String::new(),
            2 => rng.pick(EXTREME_INTS).to_string(),
            _ => rng.range(-5, 5).to_string(),
        }
    };
    match rng.below(12) {
        0..=3 => match rng.below(10) {
            0 => rng.pick(EXTREME_INTS).to_string(),
            _ => rng.range(-5, 5).to_string(),
        },
        4..=7 => {
            let (start, stop) = (bound(rng), bound(rng));
            match rng.below(3) {
                0 => format!("{start}:{stop}"),
                _ => {
                    let step = match rng.below(8) {
                        0 => "0".to_string(),
                        1 => String::new(),
                        2 => rng.pick(EXTREME_INTS).to_string(),
                        _ => rng.pick(&["1", "2", "3", "-1", "-2", "-3"]).to_string(),
                    };
                    format!("{start}:{stop}:{step}")
                }
            }
        }
        8 => "...".into(),
        9 => rng.pick(&["None", "tf.newaxis", "newaxis"]).to_string(),
        10 => ":".into(),
        _ => rng
            .pick(&["", "a", "1:2:3:4", "+", "-", "1e3", "\u{e9}", "99999999999999999999", " : ", "()", "[1]"])
            .to_string(),
    }
}

fn key_attr(rng: &mut Rng) -> Attr {
    match rng.below(25) {
        0 => Attr::Int(rng.range(-3, 3)),
        1 => wrong_kind(rng),
        2 => Attr::Str(rng.pick(&["", "()", ",", " ", ",,", "1,,2", "...,...", "1,"]).to_string()),
        _ => {
            let n = rng.below(4) + 1;
            let items: Vec<String> = (0..n).map(|_| key_item(rng)).collect();
            Attr::Str(items.join(if rng.chance(0.5) { ", " } else { "," }))
        }
    }
}

/// A value for attribute `attr` of op `op` whose first input has rank `rank`.
fn attr_value(rng: &mut Rng, op: &str, attr: &str, rank: usize) -> Attr {
    match attr {
        "dtype" => match rng.below(12) {
            0 => Attr::Str(rng.pick(&["float", "", "int128", "Float32", "complex64"]).to_string()),
            1 => wrong_kind(rng),
            _ => Attr::Str(random_dtype(rng).name().to_string()),
        },
        "axis" if op == "reverse" => {
            if rng.chance(0.2) {
                int_attr(rng, -4, 4)
            } else {
                let len = rng.below(rank.min(3) + 1);
                int_list_attr(rng, len, -4, 4)
            }
        }
        "axis" => match rng.below(10) {
            0 => Attr::Null,
            1 if op.starts_with("reduce_") || op == "bounding_shape" => {
                let len = rng.below(rank.min(3) + 1);
                int_list_attr(rng, len, -4, 4)
            }
            _ => int_attr(rng, -4, 4),
        },
        "direction" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str("ascending".into()),
            _ => Attr::Str(rng.pick(&["ASCENDING", "DESCENDING"]).to_string()),
        },
        "k" => int_attr(rng, -1, 4),
        "outer_axis" | "inner_axis" | "batch_dims" => int_attr(rng, -4, 4),
        "depth" => int_attr(rng, -1, 5),
        "on_value" | "off_value" => scalar_attr(rng),
        "output_type" | "out_type" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str("float32".into()),
            _ => Attr::Str(rng.pick(&["int32", "int64"]).to_string()),
        },
        "keepdims" | "preserve_short_sequences" | "exclusive" | "reverse" | "stable" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => Attr::Bool(rng.chance(0.5)),
        },
        "multiples" => match rng.below(10) {
            0 => int_attr(rng, 0, 3),
            _ => int_list_attr(rng, rank, -1, 3),
        },
        "key" if op == "strings.to_hash_bucket_strong" => int_list_attr(rng, 2, -3, 1 << 40),
        "key" => key_attr(rng),
        "num_segments" | "nrows" => int_attr(rng, -1, 6),
        "uniform_row_length" => {
            let lo = if rng.chance(0.8) { 1 } else { -1 };
            int_attr(rng, lo, 3)
        }
        "padding" | "default_value" => scalar_attr(rng),
        "shape" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => {
                let len = if rng.chance(0.7) { rank } else { rng.below(5) };
                Attr::List(
                    (0..len)
                        .map(|_| match rng.below(6) {
                            0 => Attr::Null,
                            1 => Attr::Int(-1),
                            _ => int_attr(rng, 0, 4),
                        })
                        .collect(),
                )
            }
        },
        "sep" | "separator" => string_attr(rng),
        "maxsplit" => int_attr(rng, -1, 3),
        "pos" | "len" => int_attr(rng, -5, 5),
        "unit" => match rng.below(6) {
            0 => Attr::Str("CHAR".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str(rng.pick(&["BYTE", "UTF8_CHAR"]).to_string()),
        },
        "num_buckets" | "num_oov_buckets" => int_attr(rng, 0, 1000),
        "hash_key" => int_attr(rng, -3, 1 << 40),
        "ragged_rank" => int_attr(rng, 0, 3),
        "pattern" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str(rng.pick(&["(a", "[b-", "(?=a)b", "a{99999}"]).to_string()),
            _ => Attr::Str(rng.pick(&["a", "[a-c]+", "(b)(c)?", "", ".*", "^a|c$", "世界"]).to_string()),
        },
        "rewrite" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::Str(rng.pick(&["\\9", "\\", "\\x"]).to_string()),
            _ => Attr::Str(rng.pick(&["", "x", "<\\0>", "\\1\\1", "$1"]).to_string()),
        },
        "replace_global" => match rng.below(10) {
            0 => wrong_kind(rng),
            _ => Attr::Bool(rng.chance(0.5)),
        },
        "output_encoding" | "input_encoding" => match rng.below(6) {
            0 => Attr::Str("UTF-16".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str("UTF-8".into()),
        },
        "errors" => match rng.below(8) {
            0 => Attr::Str("loud".into()),
            1 => wrong_kind(rng),
            _ => Attr::Str(rng.pick(&["replace", "ignore", "strict"]).to_string()),
        },
        "replacement_char" => match rng.below(6) {
            0 => Attr::Int(0xD800),
            1 => int_attr(rng, -1, 0x11_0000),
            _ => Attr::Int(*rng.pick(&[0xFFFD, 63, 32])),
        },
        "vocab" => match rng.below(8) {
            0 => wrong_kind(rng),
            1 => Attr::List(vec![string_attr(rng), string_attr(rng)]),
            _ => Attr::List((0..rng.below(5)).map(|k| Attr::Str(["a", "", "bb", "ccc", "d"][k].into())).collect()),
        },
        "ngram_width" => match rng.below(3) {
            0 => {
                let len = rng.below(4);
                int_list_attr(rng, len, 0, 4)
            }
            _ => {
                let lo = if rng.chance(0.8) { 1 } else { -1 };
                int_attr(rng, lo, 4)
            }
        },
        "pad_values" => match rng.below(5) {
            0 => wrong_kind(rng),
            1 | 2 => string_attr(rng),
            _ => Attr::List(vec![string_attr(rng), string_attr(rng)]),
        },
        "padding_width" => int_attr(rng, -2, 4),
        _ => wrong_kind(rng),
    }
}

/// Random attributes for `op` whose first input has rank `rank`: each attribute it reads, present
/// most of the time; now and then an attribute it does not know.
pub(crate) fn attrs_for(rng: &mut Rng, op: &str, rank: usize) -> BTreeMap<String, Attr> {
    let mut map = BTreeMap::new();
    for &attr in attr_names(op) {
        if rng.chance(0.85) {
            map.insert(attr.to_string(), attr_value(rng, op, attr, rank));
        }
    }
    if rng.chance(0.03) {
        let attr = *rng.pick(&["axis", "bogus", "dtype", "key", "multiples"]);
        map.insert(attr.to_string(), attr_value(rng, op, attr, rank));
    }
    map
}
