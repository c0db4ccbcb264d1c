//! Byte sizes never wrap: a shape with more elements than memory can hold is a panic naming
//! it where it is made, and a huge but addressable allocation is `Err(OutOfMemory)`.

use ferrograd::{Error, Tensor};

#[test]
#[should_panic(expected = "more elements than memory can hold")]
fn a_shape_past_the_address_space_panics_naming_it() {
    // 2^62 f32 elements is 2^64 bytes: it used to wrap to 0 and segfault in release builds.
    let _ = Tensor::zeros([1usize << 62]).contiguous();
}

#[test]
#[should_panic(expected = "[4611686018427387904, 4]")]
fn products_of_axes_are_checked_too() {
    let _ = Tensor::zeros([1usize << 62, 4]);
}

#[test]
fn an_allocation_that_cannot_be_had_is_out_of_memory() {
    // 2^59 f32 = 2 EiB: addressable, not allocatable.
    let Err(err) = Tensor::zeros([1usize << 59]).contiguous().realize() else { panic!("2 EiB cannot be allocated") };
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
}
