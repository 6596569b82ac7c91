//! What ragtime checks in a Parquet footer before the upstream reader trusts it (row counts and
//! the byte ranges of the column chunks it will read), and the Arrow type a column is read as
//! (dictionary-encoded columns decoded to plain values).

use std::ops::Range;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef};
use parquet::file::metadata::ParquetMetaData;

/// The rows of each row group, checked: none negative, and their total fits an `i64` (the reader
/// sizes its batches from them and asserts on negative column-chunk ranges).
pub(super) fn row_group_rows(metadata: &ParquetMetaData) -> Result<Vec<u64>, (usize, String)> {
    let mut total: u64 = 0;
    let mut rows = Vec::with_capacity(metadata.num_row_groups());
    for (k, group) in metadata.row_groups().iter().enumerate() {
        let n =
            u64::try_from(group.num_rows()).map_err(|_| (k, format!("a negative row count ({})", group.num_rows())))?;
        total = total
            .checked_add(n)
            .filter(|&t| t <= i64::MAX as u64)
            .ok_or_else(|| (k, format!("a row count ({n}) that takes the file past 2^63 rows")))?;
        rows.push(n);
    }
    Ok(rows)
}

/// Checks the byte range of every column chunk of the top-level column `root` (each of its
/// leaves, in each row group): not negative and inside the file of `file_len` bytes. Returns the
/// first bad chunk's row group and what is wrong with it.
pub(super) fn check_chunk_ranges(
    metadata: &ParquetMetaData,
    root: usize,
    file_len: u64,
) -> Result<(), (usize, String)> {
    let schema = metadata.file_metadata().schema_descr();
    let leaves: Vec<usize> =
        (0..schema.num_columns()).filter(|&leaf| schema.get_column_root_idx(leaf) == root).collect();
    for (k, group) in metadata.row_groups().iter().enumerate() {
        for &leaf in &leaves {
            let Some(chunk) = group.columns().get(leaf) else {
                return Err((k, format!("no column chunk for leaf column {leaf}")));
            };
            let start = chunk.dictionary_page_offset().unwrap_or(chunk.data_page_offset());
            let len = chunk.compressed_size();
            let range = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(start, len)| Some(start..start.checked_add(len)?));
            match range {
                Some(Range { end, .. }) if end <= file_len => {}
                _ => {
                    return Err((
                        k,
                        format!(
                            "column chunk of leaf {leaf} ({}) at byte {start}, {len} bytes long, outside the file of {file_len} bytes",
                            chunk.column_path()
                        ),
                    ))
                }
            }
        }
    }
    Ok(())
}

/// `field` with every dictionary type in it replaced by its value type, or `None` when it has
/// none. Read with that type, a dictionary-encoded column comes out of the Parquet reader as
/// plain values (the reader decodes the dictionary pages itself; no dictionary array is built).
pub(super) fn without_dictionaries(field: &Field) -> Option<Field> {
    plain_type(field.data_type()).map(|data_type| field.clone().with_data_type(data_type))
}

fn plain_type(data_type: &DataType) -> Option<DataType> {
    let child = |f: &FieldRef| without_dictionaries(f).map(Arc::new);
    match data_type {
        DataType::Dictionary(_, values) => Some(plain_type(values).unwrap_or_else(|| values.as_ref().clone())),
        DataType::List(f) => child(f).map(DataType::List),
        DataType::LargeList(f) => child(f).map(DataType::LargeList),
        DataType::FixedSizeList(f, n) => child(f).map(|f| DataType::FixedSizeList(f, *n)),
        _ => None,
    }
}

/// The row groups holding rows `rows` of a file whose row groups have `group_rows` rows each
/// (an empty range past the last one).
pub(super) fn row_groups_of(group_rows: &[u64], rows: Range<u64>) -> Range<usize> {
    let mut first_row = 0u64;
    let (mut first, mut end) = (None, group_rows.len());
    for (k, &n) in group_rows.iter().enumerate() {
        let group = first_row..first_row.saturating_add(n);
        if first.is_none() && group.end > rows.start {
            first = Some(k);
        }
        if group.start >= rows.end.max(rows.start + 1) {
            end = k;
            break;
        }
        first_row = group.end;
    }
    let first = first.unwrap_or(group_rows.len());
    first..end.max(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_groups_cover_the_rows_asked_for() {
        let groups = [10, 0, 5, 20];
        assert_eq!(row_groups_of(&groups, 0..4), 0..1);
        assert_eq!(row_groups_of(&groups, 8..12), 0..3);
        assert_eq!(row_groups_of(&groups, 10..15), 2..3);
        assert_eq!(row_groups_of(&groups, 14..16), 2..4);
        assert_eq!(row_groups_of(&groups, 35..40), 4..4);
        assert_eq!(row_groups_of(&groups, 3..3), 0..1);
    }

    #[test]
    fn dictionaries_are_replaced_by_their_values_at_any_depth() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let field = Field::new("t", DataType::List(Arc::new(Field::new("item", dict, true))), true);
        let plain = without_dictionaries(&field).unwrap();
        assert_eq!(plain.data_type(), &DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))));
        assert_eq!(without_dictionaries(&plain), None);
        assert_eq!(without_dictionaries(&Field::new("x", DataType::Float32, false)), None);
    }
}
