//! Source text written block by block, with the name each value has where it is written: what
//! every renderer's walk over a linear program needs (the C-style one and WGSL's).

use crate::uop::{FxHashMap, UOp};

pub(crate) struct BlockText {
    names: FxHashMap<UOp, String>,
    /// Per open block (loop or `if`): the names bound inside it and what they replaced. A value
    /// the linearizer emits a second time inside a block (an accumulator's initial vector) gets
    /// its own variable there; when the block closes, the outer name is back, so no later line
    /// names a variable declared in a closed block.
    scopes: Vec<Vec<(UOp, Option<String>)>>,
    /// The kernel body written so far.
    pub(crate) body: String,
    depth: usize,
}

impl BlockText {
    /// An empty body, indented one level (inside the kernel's function).
    pub(crate) fn new() -> Self {
        BlockText { names: FxHashMap::default(), scopes: vec![Vec::new()], body: String::new(), depth: 1 }
    }

    /// Names the value `u` from here to the end of the current block.
    pub(crate) fn bind(&mut self, u: &UOp, name: String) {
        let old = self.names.insert(u.clone(), name);
        self.scopes.last_mut().expect("the kernel's own block").push((u.clone(), old));
    }

    pub(crate) fn open_block(&mut self) {
        self.depth += 1;
        self.scopes.push(Vec::new());
    }

    /// Closes the innermost block with `}`; the names bound in it are forgotten.
    pub(crate) fn close_block(&mut self) {
        self.depth -= 1;
        for (u, old) in self.scopes.pop().expect("END without an open block").into_iter().rev() {
            match old {
                Some(name) => self.names.insert(u, name),
                None => self.names.remove(&u),
            };
        }
        self.line("}");
    }

    /// Writes one line at the current indentation.
    pub(crate) fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.body.push_str("  ");
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    /// The name (or inlined expression) of `u`.
    pub(crate) fn name(&self, u: &UOp) -> &str {
        self.names
            .get(u)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("render: {:?} used before it is defined", u.op()))
    }
}
