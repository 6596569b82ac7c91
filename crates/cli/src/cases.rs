//! Choosing cases by name (`ragtime run --case`, `ragtime conformance --case`): a name that
//! matches no case gets an error that suggests the closest names and lists the cases there are.

/// Names printed at most in the list of available cases.
const LISTED: usize = 40;
/// Suggestions given at most.
const SUGGESTED: usize = 5;
/// How similar (Jaro-Winkler, 0 to 1) a name must be to be suggested; clap uses the same bar.
const SIMILAR: f64 = 0.8;

/// The names among `names` closest to `wanted`, best first: those containing it, and those similar
/// to it as a whole or in their last part (after the group's `/`).
pub fn closest<'a>(names: &[&'a str], wanted: &str) -> Vec<&'a str> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = names
        .iter()
        .filter_map(|&name| {
            let lower = name.to_lowercase();
            let last = lower.rsplit('/').next().unwrap_or(&lower);
            let similarity = strsim::jaro_winkler(&lower, &wanted_lower).max(strsim::jaro_winkler(last, &wanted_lower));
            let contains = !wanted_lower.is_empty() && lower.contains(&wanted_lower);
            let score = if contains { 1.0 + similarity } else { similarity };
            (score >= SIMILAR).then_some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(SUGGESTED).map(|(_, n)| n).collect()
}

/// The message for a `--case` that matches no case of `place` (a file or a list of paths):
/// suggestions when some names are close, then the names there are (or how to list them all).
pub fn no_such_case(wanted: &str, names: &[&str], place: &str, list_hint: &str) -> String {
    let mut message = format!("no case named {wanted:?} in {place}");
    let close = closest(names, wanted);
    if !close.is_empty() {
        message.push_str(&format!("; did you mean {}?", quoted(&close).join(" or ")));
    }
    match names.len() {
        0 => message.push_str("\nthere are no cases there"),
        n if n <= LISTED => message.push_str(&format!("\nthe {n} cases there: {}", names.join(", "))),
        n => message.push_str(&format!(
            "\nthere are {n} cases, the first {LISTED}: {}, ...\n{list_hint}",
            names[..LISTED].join(", ")
        )),
    }
    message
}

fn quoted(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| format!("{n:?}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 4] =
        ["seed_walkthrough/add_scalar", "seed_walkthrough/times_two_plus_one", "partitions/from_row_splits", "w/x"];

    #[test]
    fn typos_and_parts_of_names_are_suggested() {
        assert_eq!(closest(&NAMES, "add_scaler"), ["seed_walkthrough/add_scalar"]);
        assert_eq!(closest(&NAMES, "times_two"), ["seed_walkthrough/times_two_plus_one"]);
        assert_eq!(closest(&NAMES, "FROM_ROW_SPLIT"), ["partitions/from_row_splits"]);
        assert!(closest(&NAMES, "qqqq").is_empty());
    }

    #[test]
    fn the_message_suggests_then_lists() {
        let m = no_such_case("add_scaler", &NAMES, "f.json", "hint");
        assert!(
            m.starts_with("no case named \"add_scaler\" in f.json; did you mean \"seed_walkthrough/add_scalar\"?"),
            "{m}"
        );
        assert!(m.ends_with("the 4 cases there: seed_walkthrough/add_scalar, seed_walkthrough/times_two_plus_one, partitions/from_row_splits, w/x"), "{m}");
        let many: Vec<String> = (0..100).map(|i| format!("g/case{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let m = no_such_case("nope", &many, "here", "use --list");
        assert!(m.contains("there are 100 cases, the first 40: g/case0,") && m.ends_with("\nuse --list"), "{m}");
        assert!(!m.contains("did you mean"), "{m}");
    }
}
