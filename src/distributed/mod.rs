//! Collectives across processes and machines, configured like `torch.distributed`: a
//! [`Communicator`] knows its rank and the world size and offers `all_reduce`, `broadcast`,
//! `all_gather`, `reduce_scatter` and `barrier` on tensors.
//!
//! Every collective is built on one exchange, an all-gather of bytes, which a [`Transport`]
//! provides: `in_process` (threads of one process, for tests) and `tcp` (processes on one or
//! several machines, through rank 0, with `std::net`) and, with the cargo feature `mpi`, `mpi`
//! (MPI's own all-gather, under `mpirun`). Reductions then run as tensor ops on the
//! caller's device over the contributions in rank order, so every rank computes the same bits.
//! A rank that fails makes the others' next collective an `Err` naming it (a closed connection
//! or a dropped communicator at once, a hung one after `DIST_TIMEOUT` seconds), never a hang.
//!
//! Not here yet: NCCL, collectives in a device's own memory (every exchange goes through host
//! bytes), and gradient buckets sent while backward is still running.

mod in_process;
#[cfg(feature = "mpi")]
mod mpi;
mod tcp;
mod transport;

pub use transport::{timeout, Transport};

use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::tensor::buffer_view;
use crate::Tensor;
use std::time::Duration;

/// How `all_reduce` and `reduce_scatter` combine the ranks' tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    /// The sum divided by the world size (what data-parallel gradients need).
    Mean,
    Max,
    Min,
    Product,
}

/// One rank's handle on a group of processes (see the module documentation).
pub struct Communicator {
    transport: Box<dyn Transport>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn env_number(names: &[&str]) -> Result<Option<usize>> {
    for name in names {
        if let Some(v) = env(name) {
            return v.trim().parse().map(Some).map_err(|_| {
                Error::Distributed(format!("{name}={v:?} is not a number (it is a rank or a world size)"))
            });
        }
    }
    Ok(None)
}

impl Communicator {
    pub fn new(transport: Box<dyn Transport>) -> Communicator {
        Communicator { transport }
    }

    /// From the launcher's environment, as `torch.distributed`'s `env://`: `RANK` and
    /// `WORLD_SIZE` (or MPI's `OMPI_COMM_WORLD_RANK`/`OMPI_COMM_WORLD_SIZE`, or `PMI_RANK`/
    /// `PMI_SIZE`, so `mpirun -np N` works) and `MASTER_ADDR`/`MASTER_PORT` for rank 0's
    /// address. Without them: a group of one (this process alone).
    pub fn from_env() -> Result<Communicator> {
        let rank = env_number(&["RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"])?;
        let world = env_number(&["WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"])?;
        let (rank, world) = match (rank, world) {
            (None, None) => return Ok(Communicator::in_process(1).remove(0)),
            (Some(r), Some(w)) => (r, w),
            _ => {
                return Err(Error::Distributed(
                    "set both RANK and WORLD_SIZE (or launch with mpirun, which sets its own)".into(),
                ))
            }
        };
        let launched_by_mpi = env("OMPI_COMM_WORLD_SIZE").is_some() || env("PMI_SIZE").is_some();
        let (Some(addr), Some(port)) = (env("MASTER_ADDR"), env("MASTER_PORT")) else {
            if launched_by_mpi {
                return Communicator::mpi();
            }
            return Err(Error::Distributed(format!(
                "rank {rank} of {world}: set MASTER_ADDR and MASTER_PORT to rank 0's host and a free port \
                 (e.g. MASTER_ADDR=127.0.0.1 MASTER_PORT=29500); every rank needs the same values"
            )));
        };
        Communicator::tcp(rank, world, &format!("{addr}:{port}"), timeout())
    }

    /// MPI's world (the process was started by `mpirun`; cargo feature `mpi`). Without the
    /// feature, an `Err` saying how to build it (or to use TCP with MASTER_ADDR/MASTER_PORT).
    pub fn mpi() -> Result<Communicator> {
        #[cfg(feature = "mpi")]
        return mpi::connect().map(Communicator::new);
        #[cfg(not(feature = "mpi"))]
        Err(Error::Distributed(
            "started by an MPI launcher, but ferrograd was built without MPI: rebuild with `--features mpi` \
             (needs an MPI library: apt-get install openmpi-bin libopenmpi-dev), or set MASTER_ADDR and \
             MASTER_PORT to use TCP"
                .into(),
        ))
    }

    /// A group of `size` ranks that are threads of this process (one communicator per thread),
    /// waiting `DIST_TIMEOUT` for each other.
    pub fn in_process(size: usize) -> Vec<Communicator> {
        Communicator::in_process_with_timeout(size, timeout())
    }

    /// `in_process` with its own timeout.
    pub fn in_process_with_timeout(size: usize, timeout: Duration) -> Vec<Communicator> {
        in_process::group(size, timeout).into_iter().map(Communicator::new).collect()
    }

    /// Joins a group over TCP as `rank` of `world`, rank 0 listening at `addr` (`host:port`);
    /// waits up to `timeout` for the others to connect (star through rank 0, see `tcp.rs`).
    pub fn tcp(rank: usize, world: usize, addr: &str, timeout: Duration) -> Result<Communicator> {
        tcp::connect(rank, world, addr, timeout).map(Communicator::new)
    }

    pub fn rank(&self) -> usize {
        self.transport.rank()
    }
    pub fn world_size(&self) -> usize {
        self.transport.world_size()
    }

    /// Every rank's tensor as it arrived here, on `like`'s device (checked to have its size).
    fn gather_parts(&self, t: &Tensor, what: &str) -> Result<Vec<Tensor>> {
        let bytes = t.to_bytes()?;
        let parts = self.transport.all_gather_bytes(&bytes)?;
        let device = t.devices().remove(0);
        parts
            .into_iter()
            .enumerate()
            .map(|(r, p)| {
                if p.len() != bytes.len() {
                    return Err(Error::Distributed(format!(
                        "{what}: rank {r} sent {} bytes, rank {} has {} (shape {:?} of {}): every rank must pass \
                         the same shape and dtype",
                        p.len(),
                        self.rank(),
                        bytes.len(),
                        t.shape(),
                        t.dtype()
                    )));
                }
                let buf = Buffer::with_data(&device, t.dtype(), p);
                Ok(Tensor::from_uop(buffer_view(buf, &t.shape())))
            })
            .collect()
    }

    /// `op` over every rank's `t` (same shape and dtype on all), the result on every rank;
    /// combined in rank order, so all ranks get the same bits.
    pub fn all_reduce(&self, t: &Tensor, op: ReduceOp) -> Result<Tensor> {
        let parts = self.gather_parts(t, "all_reduce")?;
        let out = combine(&parts, op);
        out.realize()
    }

    /// Rank `root`'s tensor on every rank.
    pub fn broadcast(&self, t: &Tensor, root: usize) -> Result<Tensor> {
        self.check_rank(root, "broadcast")?;
        let mut parts = self.gather_parts(t, "broadcast")?;
        Ok(parts.swap_remove(root))
    }

    /// Every rank's tensor concatenated along axis 0, in rank order.
    pub fn all_gather(&self, t: &Tensor) -> Result<Tensor> {
        let parts = self.gather_parts(t, "all_gather")?;
        Tensor::cat(&parts.iter().collect::<Vec<_>>(), 0).realize()
    }

    /// `op` over every rank's `t`, split along axis 0 into world-size parts: rank `r` gets part
    /// `r` (axis 0 must split evenly).
    pub fn reduce_scatter(&self, t: &Tensor, op: ReduceOp) -> Result<Tensor> {
        let (n, shape) = (self.world_size(), t.shape());
        if shape.is_empty() || shape[0] % n != 0 {
            return Err(Error::Distributed(format!(
                "reduce_scatter: axis 0 of shape {shape:?} does not split over {n} ranks"
            )));
        }
        let whole = combine(&self.gather_parts(t, "reduce_scatter")?, op);
        let len = shape[0] / n;
        whole.narrow(0, self.rank() * len, len).contiguous().realize()
    }

    /// Returns once every rank has called it.
    pub fn barrier(&self) -> Result<()> {
        self.transport.all_gather_bytes(&[]).map(|_| ())
    }

    /// Data-parallel training's step: each tensor's `.grad()` replaced by its mean over the
    /// ranks. The gradients travel in buckets of about `bucket_bytes` (one exchange per bucket,
    /// not per tensor, one dtype per bucket); tensors without a gradient are skipped (on every
    /// rank alike).
    pub fn average_gradients(&self, params: &[Tensor], bucket_bytes: usize) -> Result<()> {
        let with_grad: Vec<(&Tensor, Tensor)> = params.iter().filter_map(|p| Some((p, p.grad()?.flatten()))).collect();
        let mut start = 0;
        while start < with_grad.len() {
            let mut end = start;
            let mut bytes = 0;
            // A bucket holds one dtype (the gradients are concatenated as they are).
            let dtype = with_grad[start].1.dtype();
            while end < with_grad.len()
                && (end == start
                    || (bytes + with_grad[end].1.nbytes() <= bucket_bytes && with_grad[end].1.dtype() == dtype))
            {
                bytes += with_grad[end].1.nbytes();
                end += 1;
            }
            let bucket = &with_grad[start..end];
            let flat = Tensor::cat(&bucket.iter().map(|(_, g)| g).collect::<Vec<_>>(), 0);
            let mean = self.all_reduce(&flat, ReduceOp::Mean)?;
            let mut offset = 0;
            for (p, g) in bucket {
                let n = g.numel();
                p.set_grad(Some(mean.narrow(0, offset, n).reshape(p.shape()).cast(p.dtype())));
                offset += n;
            }
            start = end;
        }
        Ok(())
    }

    fn check_rank(&self, r: usize, what: &str) -> Result<()> {
        match r < self.world_size() {
            true => Ok(()),
            false => {
                Err(Error::Distributed(format!("{what}: rank {r} does not exist in a world of {}", self.world_size())))
            }
        }
    }
}

/// The ranks' tensors combined in rank order.
fn combine(parts: &[Tensor], op: ReduceOp) -> Tensor {
    let mut acc = parts[0].clone();
    for p in &parts[1..] {
        acc = match op {
            ReduceOp::Sum | ReduceOp::Mean => &acc + p,
            ReduceOp::Max => acc.maximum(p),
            ReduceOp::Min => acc.minimum(p),
            ReduceOp::Product => &acc * p,
        };
    }
    match op {
        ReduceOp::Mean => acc / parts.len() as f64,
        _ => acc,
    }
}
