//! Spreading a tensor over several devices (`shard`) and asking where it lives. The ops of a
//! spread tensor build ordinary graph nodes on the joined device name; the scheduler's
//! `schedule/multi.rs` splits them per device when they are realized.

use super::Tensor;
use crate::error::Result;
use crate::schedule::multi::{self, Spread};
use crate::uop::UOp;

impl Tensor {
    /// This tensor spread over `devices`: split into equal consecutive slices of `axis`, one
    /// per device in order, or, with `None`, a whole copy on each (replicated). Ops on the
    /// result run on every device at once; a reduce over the sharded axis ends in an allreduce;
    /// `.to(device)` gathers. Panics when the axis does not split evenly, when a device name
    /// repeats, or for fewer than one device. A tensor spread already is gathered first.
    pub fn shard<D: AsRef<str>>(&self, devices: &[D], axis: impl Into<Option<isize>>) -> Tensor {
        let names: Vec<String> = devices.iter().map(|d| super::create::checked_device_name(d.as_ref())).collect();
        assert!(!names.is_empty(), "shard: needs at least one device");
        for (i, d) in names.iter().enumerate() {
            assert!(!names[..i].contains(d), "shard: device {d} appears twice in {names:?}");
        }
        let source = match self.is_spread() {
            true => self.to(&names[0]),
            false => self.clone(),
        };
        let shape = source.shape();
        let axis = axis.into().map(|a| super::shape_args::resolve_axis("shard", a, &shape));
        let parts = names.len();
        if let Some(a) = axis {
            assert!(
                shape[a] % parts == 0,
                "shard: axis {a} of shape {shape:?} does not split evenly over {parts} devices ({}); pad it to a \
                 multiple of {parts} first",
                names.join(", ")
            );
        }
        let shards: Vec<UOp> = names
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let part = match axis {
                    Some(a) => {
                        let len = shape[a] / parts;
                        let cut: Vec<(usize, usize)> = shape
                            .iter()
                            .enumerate()
                            .map(|(k, &n)| if k == a { (i * len, (i + 1) * len) } else { (0, n) })
                            .collect();
                        source.shrink(&cut)
                    }
                    None => source.clone(),
                };
                part.to(d).uop()
            })
            .collect();
        multi::note_spread();
        Tensor::from_uop(Spread { shards, axis }.multi())
    }

    /// [`Tensor::shard`] in place, realized: this handle becomes the spread tensor, each part in
    /// its device's memory, and stays what it was to autograd (a parameter stays a parameter, and
    /// an optimizer's assigns write every device's part in place).
    pub fn shard_<D: AsRef<str>>(&self, devices: &[D], axis: impl Into<Option<isize>>) -> Result<&Tensor> {
        let spread = self.shard(devices, axis).realize()?;
        self.set_uop(spread.uop());
        Ok(self)
    }

    /// The devices this tensor lives on: one, or several for a spread tensor.
    pub fn devices(&self) -> Vec<String> {
        multi::devices_of(&self.uop())
    }

    /// Whether the tensor is spread over several devices (see [`Tensor::shard`]).
    pub fn is_spread(&self) -> bool {
        multi::is_spread(&self.uop())
    }

    /// The axis a spread tensor is sharded along (`None`: replicated, or on one device).
    pub fn shard_axis(&self) -> Option<usize> {
        match self.is_spread() {
            true => multi::shard_axis(&self.uop()),
            false => None,
        }
    }
}
