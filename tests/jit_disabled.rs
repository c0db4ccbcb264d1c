//! `JIT=0` turns TinyJit off: every call runs the function. (Its own test binary, because it
//! sets an environment variable.)

use ferrograd::{Tensor, TinyJit};
use std::cell::Cell;
use std::rc::Rc;

#[test]
fn jit_0_runs_the_function_every_time() {
    std::env::set_var("JIT", "0");
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        c.set(c.get() + 1);
        vec![&xs[0] * 2.0]
    });
    for i in 0..4 {
        let x = Tensor::from_slice(&[i as f32]);
        assert_eq!(jit.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![2.0 * i as f32]);
    }
    assert_eq!(calls.get(), 4);
    assert_eq!(jit.captured_len(), None);
}
