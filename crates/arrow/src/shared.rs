//! Arrow buffers that keep ragtime's buffers alive instead of copying them: each wraps a clone of
//! the ragtime value (an `Arc` bump) as the owner of a `bytes::Bytes`, which Arrow adopts.

use std::sync::Arc;

use arrow_buffer::{ArrowNativeType, Buffer, ToByteSlice};
use ndarray::{ArcArray, IxDyn};
use ragtime_core::RowPartition;

/// Owns a numeric ragtime array for an Arrow buffer (the array is always in standard layout).
struct SharedArray<T>(ArcArray<T, IxDyn>);

impl<T: ArrowNativeType> AsRef<[u8]> for SharedArray<T> {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice().unwrap_or(&[]).to_byte_slice()
    }
}

/// Owns a partition for an Arrow offsets buffer of its row splits.
struct SharedSplits(RowPartition);

impl AsRef<[u8]> for SharedSplits {
    fn as_ref(&self) -> &[u8] {
        self.0.row_splits().to_byte_slice()
    }
}

/// Owns the offsets of a string column for an Arrow offsets buffer.
struct SharedOffsets(Arc<[i64]>);

impl AsRef<[u8]> for SharedOffsets {
    fn as_ref(&self) -> &[u8] {
        self.0.to_byte_slice()
    }
}

/// The elements of `values` as an Arrow buffer, without copying them. `values` must be in
/// standard layout (every ragtime array is); otherwise the buffer is empty.
pub(crate) fn shared_buffer<T: ArrowNativeType>(values: ArcArray<T, IxDyn>) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(SharedArray(values)))
}

/// The row splits of `partition` as an Arrow buffer of i64 offsets, without copying them.
pub(crate) fn splits_buffer(partition: RowPartition) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(SharedSplits(partition)))
}

/// The offsets of a string column as an Arrow buffer of i64 offsets, without copying them.
pub(crate) fn offsets_buffer(offsets: Arc<[i64]>) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(SharedOffsets(offsets)))
}

/// The bytes of a string column as an Arrow buffer, without copying them.
pub(crate) fn bytes_buffer(bytes: Arc<[u8]>) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(bytes))
}
