//! The front end: `Tensor`, a lazy handle on a node of the graph. Methods only build UOps;
//! work happens at `realize()` or when data is read.

mod activation;
mod assign;
mod attention;
pub(crate) mod checks;
mod conv;
mod create;
mod data;
mod decomp;
mod elementwise;
mod grad;
mod handle;
mod indexing;
mod linalg;
mod loss;
mod math;
mod movement;
mod no_grad;
mod norm;
mod pool;
mod random;
mod reduce;
mod reduce_ext;
mod resize_u8;
mod select;
mod selftest;
mod shape_args;
mod shape_ops;
mod shard;
mod sort;
pub(crate) mod symbolic;
pub(crate) mod trace;
mod trig;

pub use attention::AttentionOpts;
pub use conv::ConvOpts;
pub use create::with_default_device;
pub use loss::{CrossEntropyOpts, Reduction};
pub use random::{is_skip_init, set_training, skip_init, train};

pub(crate) use assign::pending_assign_nodes;
pub(crate) use create::{buffer_view, buffer_view_dims, default_device};
pub use elementwise::Operand;
pub(crate) use grad::{
    add_gradients, custom_gradient, keep_zeros, set_custom_gradient, tensors_requiring_grad, with_sources,
    CustomGradient,
};
pub use handle::Tensor;
pub(crate) use handle::TensorInner;
pub use indexing::Idx;
pub use no_grad::{is_no_grad, no_grad};
pub use pool::{InterpMode, IntoSpatial, Padding, PoolOpts};
pub use shape_args::{IntoAxes, IntoShape};
pub use shape_ops::PadMode;
pub use trace::Randomness;
