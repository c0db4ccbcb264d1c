//! The no-grad scope: a per-thread flag that detaches every tensor made inside it.

use std::cell::Cell;

thread_local! {
    static NO_GRAD: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` with gradient tracking off on this thread: tensors computed inside are detached
/// (an optimizer's update does not become part of the next backward graph).
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            NO_GRAD.with(|c| c.set(c.get() - 1));
        }
    }
    NO_GRAD.with(|c| c.set(c.get() + 1));
    let _restore = Restore;
    f()
}

/// Whether a no-grad scope is active on this thread.
pub fn is_no_grad() -> bool {
    NO_GRAD.with(|c| c.get() > 0)
}
