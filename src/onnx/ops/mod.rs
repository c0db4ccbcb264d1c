//! The operators, by family. Each family's `run` answers the ops it knows (`None` for others);
//! an op no family knows is `Error::Unsupported` naming it and the opset.

mod attention;
mod elementwise;
mod grid;
mod host;
mod indexing;
mod loss;
mod nn;
mod quantize;
mod recurrent;
mod reduce;
mod resize;
mod shape;
mod signal;

use super::node::{Node, Outs};
use crate::error::Result;

/// A family's answer: `None` for an op it does not know.
type Family = fn(&Node) -> Option<Result<Outs>>;

/// Every family, asked in turn.
const FAMILIES: &[Family] = &[
    elementwise::run,
    shape::run,
    indexing::run,
    reduce::run,
    nn::run,
    attention::run,
    loss::run,
    quantize::run,
    signal::run,
    resize::run,
    recurrent::run,
    host::run,
    grid::run,
];

pub(crate) fn run(node: &Node) -> Result<Outs> {
    FAMILIES
        .iter()
        .find_map(|family| family(node))
        .unwrap_or_else(|| Err(node.unsupported(format!("op {}", node.op()))))
}
