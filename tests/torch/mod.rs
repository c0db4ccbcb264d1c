//! The case groups of the PyTorch-checked op suite (harness: `tests/torch_ops.rs`, format:
//! `scripts/TORCH_SUITE_FORMAT.md`). Each group is a file here with `pub fn cases()`, a fixture
//! `tests/fixtures/torch/<group>.json` and a line in `GROUPS` (and in `group_tests!` there).

pub mod elementwise;
pub mod conv;
pub mod linalg;
pub mod movement;
pub mod reduce;

use ferrograd::Tensor;

/// A case's ferrograd computation: the fixture's inputs in, the output to compare out.
pub type CaseFn = fn(&[Tensor]) -> Tensor;

/// Every group: its name (the fixture's file name) and its closures.
pub const GROUPS: &[(&str, fn() -> Vec<(&'static str, CaseFn)>)] = &[
    ("elementwise", elementwise::cases),
    ("conv", conv::cases),
    ("linalg", linalg::cases),
    ("movement", movement::cases),
    ("reduce", reduce::cases),
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

const ALL: &[&str] = &[];

pub const KNOWN_FAILURES: &[Known] = &[
    Known {
        group: "elementwise",
        case: "minimum_ties",
        devices: ALL,
        bug: "minimum's gradient at ties goes all to one operand; PyTorch and maximum split it",
    },
    Known { group: "elementwise", case: "pow_zero_exp", devices: ALL, bug: "pow's gradient is NaN at base 0" },
    Known { group: "elementwise", case: "pow_zero_base", devices: ALL, bug: "pow's gradient is NaN at base 0" },
    Known {
        group: "elementwise",
        case: "sigmoid_extreme",
        devices: ALL,
        bug: "sigmoid's gradient is NaN for large negative inputs (inf * 0)",
    },
    Known {
        group: "elementwise",
        case: "tanh_extreme",
        devices: ALL,
        bug: "tanh's gradient is NaN for large negative inputs (via sigmoid)",
    },
    Known {
        group: "elementwise",
        case: "cast_f16_to_f32_grad",
        devices: &["CPU"],
        bug: "C renderer stores f16/bf16 constants as integers (no float-to-half conversion)",
    },
    Known {
        group: "elementwise",
        case: "cast_bf16_to_f32_grad",
        devices: &["CPU"],
        bug: "C renderer stores f16/bf16 constants as integers (no float-to-half conversion)",
    },
    Known {
        group: "elementwise",
        case: "promote_int32_float16",
        devices: &["CPU"],
        bug: "C renderer stores f16/bf16 constants as integers (no float-to-half conversion)",
    },
];

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
