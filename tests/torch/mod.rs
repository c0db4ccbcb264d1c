//! The case groups of the PyTorch-checked op suite (harness: `tests/torch_ops.rs`, format:
//! `scripts/TORCH_SUITE_FORMAT.md`). Each group is a file here with `pub fn cases()`, a fixture
//! `tests/fixtures/torch/<group>.json` and a line in `GROUPS` (and in `group_tests!` there).

pub mod activation;
pub mod args;
pub mod attention;
pub mod conv;
pub mod dtype;
pub mod elementwise;
pub mod indexing;
pub mod linalg;
pub mod loss;
pub mod math;
pub mod movement;
pub mod reduce;
pub mod reduce_ext;
pub mod select;
pub mod shape_ops;
pub mod sort;
pub mod special;
pub mod sweep;
pub mod trig;

use ferrograd::Tensor;

/// A case's ferrograd computation: the fixture's inputs in, the output to compare out.
pub type CaseFn = fn(&[Tensor]) -> Tensor;

/// A group's table of named closures.
pub type CasesFn = fn() -> Vec<(&'static str, CaseFn)>;

/// Every group: its name (the fixture's file name) and its closures.
pub const GROUPS: &[(&str, CasesFn)] = &[
    ("elementwise", elementwise::cases),
    ("indexing", indexing::cases),
    ("shape_ops", shape_ops::cases),
    ("conv", conv::cases),
    ("linalg", linalg::cases),
    ("movement", movement::cases),
    ("reduce", reduce::cases),
    ("math", math::cases),
    ("activation", activation::cases),
    ("reduce_ext", reduce_ext::cases),
    ("loss", loss::cases),
    ("dtype", dtype::cases),
    ("trig", trig::cases),
    ("sort", sort::cases),
    ("attention", attention::cases),
    ("select", select::cases),
    ("args", args::cases),
    ("sweep", sweep::cases),
    ("special", special::cases),
];

/// A case that fails because of a library bug: reported as a known failure, not a failure (and
/// as a failure once it passes, so the list stays true). `devices` empty means every device.
pub struct Known {
    pub group: &'static str,
    pub case: &'static str,
    pub devices: &'static [&'static str],
    pub bug: &'static str,
}

impl Known {
    pub fn matches(&self, group: &str, case: &str, dev: &str) -> bool {
        self.group == group && self.case == case && (self.devices.is_empty() || self.devices.contains(&dev))
    }
}

pub const KNOWN_FAILURES: &[Known] = &[];

/// Cases not run on a device (a dtype the device lacks, say): reported as skipped. `case` "*"
/// skips the whole group on that device.
pub struct Skip {
    pub group: &'static str,
    pub case: &'static str,
    pub device: &'static str,
    pub why: &'static str,
}

impl Skip {
    pub fn matches(&self, group: &str, case: &str, dev: &str) -> bool {
        self.group == group && (self.case == "*" || self.case == case) && self.device == dev
    }
}

pub const SKIPS: &[Skip] = &[];
