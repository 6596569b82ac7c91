//! Buffers shared across the boundary instead of copied: a ragtime [`SharedSlice`] wrapped as the
//! owner of an Arrow buffer (a `bytes::Bytes` owner), and an Arrow buffer adopted as the foreign
//! owner of a [`SharedSlice`].

use arrow_buffer::{ArrowNativeType, Buffer, ScalarBuffer, ToByteSlice};
use ragtime_core::SharedSlice;

/// Owns a ragtime buffer for an Arrow buffer of its bytes.
struct ArrowOwner<T: 'static>(SharedSlice<T>);

impl<T: ArrowNativeType> AsRef<[u8]> for ArrowOwner<T> {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice().to_byte_slice()
    }
}

/// The elements of `data` as an Arrow buffer, without copying them (the Arrow buffer keeps the
/// ragtime buffer alive: an `Arc` clone).
pub(crate) fn arrow_buffer<T: ArrowNativeType>(data: SharedSlice<T>) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(ArrowOwner(data)))
}

/// The elements of an Arrow buffer as a ragtime buffer, without copying them: taken over as a
/// ragtime `Vec` (which the executor may later reuse) when this is the only reference to a
/// `Vec`-allocated buffer, and otherwise shared in place as a foreign owner (any alignment Arrow
/// accepts, any allocator, shared or not), which ragtime never writes.
pub(crate) fn adopt<T: ArrowNativeType>(values: ScalarBuffer<T>) -> SharedSlice<T> {
    match values.into_inner().into_vec::<T>() {
        Ok(data) => SharedSlice::from_vec(data),
        // The buffer came out of a `ScalarBuffer<T>`, so it is aligned for `T`.
        Err(buffer) => SharedSlice::from_owner(ScalarBuffer::<T>::from(buffer)),
    }
}

/// The bytes of an Arrow buffer as a ragtime buffer, shared in place (no copy).
pub(crate) fn adopt_bytes(bytes: &Buffer) -> SharedSlice<u8> {
    SharedSlice::from_owner(ScalarBuffer::<u8>::from(bytes.clone()))
}
