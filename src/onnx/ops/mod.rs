//! The operators, by family. Each family's `run` answers the ops it knows (`None` for others);
//! an op no family knows is `Error::Unsupported` naming it and the opset.

mod elementwise;
mod nn;
mod reduce;
mod shape;

use super::node::{Node, Outs};
use crate::error::Result;

pub(crate) fn run(node: &Node) -> Result<Outs> {
    elementwise::run(node)
        .or_else(|| shape::run(node))
        .or_else(|| reduce::run(node))
        .or_else(|| nn::run(node))
        .unwrap_or_else(|| Err(node.unsupported(format!("op {}", node.op()))))
}
