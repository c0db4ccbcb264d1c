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
//! `average_gradients` sends each gradient bucket as soon as its kernels have run, on a thread
//! of its own, while backward goes on.
//!
//! With the cargo feature `nccl`, `nccl` exchanges through NCCL on the GPUs (bootstrapped over
//! TCP). Not here yet: collectives on tensors in a device's own memory (every exchange goes
//! through host bytes, NCCL's too).

mod in_process;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "nccl")]
mod nccl;
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
    /// address, over TCP, or NCCL with `DIST_BACKEND=nccl`. Without them: a group of one (this
    /// process alone).
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
        let addr = format!("{addr}:{port}");
        match crate::flags::text("DIST_BACKEND").as_deref().map(str::trim) {
            Some("nccl") => Communicator::nccl(rank, world, &addr, timeout()),
            None | Some("") | Some("tcp") => Communicator::tcp(rank, world, &addr, timeout()),
            Some(other) => Err(Error::Distributed(format!(
                "DIST_BACKEND={other:?}: use tcp (the default) or nccl (under mpirun without MASTER_ADDR: MPI)"
            ))),
        }
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

    /// NCCL on this machine's GPUs (cargo feature `nccl`) as `rank` of `world`: rank 0 at `addr`
    /// (`host:port`, as for `tcp`) hands NCCL's id to the others; each rank drives GPU
    /// `LOCAL_RANK` (else its rank modulo the GPUs here). Without the feature, the NCCL library
    /// or a GPU, an `Err` saying what to install or use instead.
    pub fn nccl(rank: usize, world: usize, addr: &str, timeout: Duration) -> Result<Communicator> {
        #[cfg(feature = "nccl")]
        return nccl::connect(rank, world, addr, timeout).map(Communicator::new);
        #[cfg(not(feature = "nccl"))]
        {
            let _ = (rank, world, addr, timeout);
            Err(Error::Distributed(
                "ferrograd was built without NCCL: rebuild with `--features nccl` (needs the NVIDIA driver and \
                 libnccl2 at run time), or use TCP (MASTER_ADDR/MASTER_PORT) or MPI"
                    .into(),
            ))
        }
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

    /// Every rank's tensor as it arrived here, on `t`'s device.
    fn gather_parts(&self, t: &Tensor, what: &str) -> Result<Vec<Tensor>> {
        let parts = self.transport.all_gather_bytes(&t.to_bytes()?)?;
        self.parts_as_tensors(parts, t, what)
    }

    /// The ranks' bytes of a tensor like `t` as tensors on its device (each checked to have
    /// its size).
    fn parts_as_tensors(&self, parts: Vec<Vec<u8>>, t: &Tensor, what: &str) -> Result<Vec<Tensor>> {
        let nbytes = t.nbytes();
        parts
            .into_iter()
            .enumerate()
            .map(|(r, p)| {
                if p.len() != nbytes {
                    return Err(Error::Distributed(format!(
                        "{what}: rank {r} sent {} bytes, rank {} has {nbytes} (shape {:?} of {}): every rank must pass \
                         the same shape and dtype",
                        p.len(),
                        self.rank(),
                        t.shape(),
                        t.dtype()
                    )));
                }
                Ok(p)
            })
            .collect::<Result<Vec<_>>>()
            .map(|parts| tensors_like(parts, t))
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
    /// not per tensor, one dtype per bucket), the last tensors' first: backward produces them
    /// first. All buckets are computed in one schedule, and a bucket is exchanged on a thread
    /// of its own as soon as the kernels producing it have run, while the rest of backward
    /// goes on (DDP's overlap). Tensors without a gradient are skipped (on every rank alike).
    pub fn average_gradients(&self, params: &[Tensor], bucket_bytes: usize) -> Result<GradientSync> {
        let with_grad: Vec<(&Tensor, Tensor)> =
            params.iter().rev().filter_map(|p| Some((p, p.grad()?.flatten()))).collect();
        let grads: Vec<&Tensor> = with_grad.iter().map(|(_, g)| g).collect();
        let buckets = buckets_of(&grads, bucket_bytes);
        let flats: Vec<Tensor> = buckets.iter().map(|b| Tensor::cat(&grads[b.clone()], 0)).collect();
        let transport = &*self.transport;
        if flats.len() == 1 {
            // One bucket: nothing to overlap, so no exchange thread.
            let bytes = flats[0].to_bytes()?;
            let parts = tensors_like(exchange_bucket(transport, 0, &bytes)?, &flats[0]);
            self.set_mean_grads(&with_grad, &parts)?;
            return Ok(GradientSync { buckets: 1, steps_left_at_send: vec![0] });
        }
        let (exchanged, steps_left_at_send) = std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<u8>)>();
            // Stops at the first failed exchange (a rank is gone: later ones would only wait).
            let comm = scope.spawn(move || {
                let mut out = Vec::new();
                for (j, bytes) in rx {
                    let res = exchange_bucket(transport, j, &bytes);
                    let failed = res.is_err();
                    out.push(res);
                    if failed {
                        break;
                    }
                }
                out
            });
            let mut queue = SendQueue::new(tx, flats.len());
            let refs: Vec<&Tensor> = flats.iter().collect();
            let realized = Tensor::realize_all_notifying(&refs, &mut |j, buf, steps_left| {
                // A bucket not readable here is read after the realize, below.
                if let Ok(bytes) = buf.to_bytes() {
                    queue.push(j, bytes, steps_left);
                }
            });
            let rest = realized.and_then(|()| {
                for (j, flat) in flats.iter().enumerate() {
                    if !queue.has(j) {
                        queue.push(j, flat.to_bytes()?, 0);
                    }
                }
                Ok(())
            });
            // Closing the channel ends the exchange thread after the buckets already sent.
            let SendQueue { tx, steps_left_at_send, .. } = queue;
            drop(tx);
            let exchanged = comm.join().expect("the exchange thread does not panic");
            rest.map(|()| (exchanged, steps_left_at_send))
        })?;
        for ((b, flat), parts) in buckets.iter().zip(&flats).zip(exchanged) {
            // `exchange_bucket` checked every part's size.
            let parts = tensors_like(parts?, flat);
            self.set_mean_grads(&with_grad[b.clone()], &parts)?;
        }
        let sync = GradientSync { buckets: buckets.len(), steps_left_at_send };
        if crate::helpers::debug_level() >= 1 {
            eprintln!("average_gradients: {sync:?}");
        }
        Ok(sync)
    }

    /// Sets each parameter's gradient to its slice of the mean of the ranks' `parts` (the
    /// bucket of `grads`, flattened and concatenated).
    fn set_mean_grads(&self, grads: &[(&Tensor, Tensor)], parts: &[Tensor]) -> Result<()> {
        let mean = combine(parts, ReduceOp::Mean).realize()?;
        let mut offset = 0;
        for (p, g) in grads {
            let n = g.numel();
            p.set_grad(Some(mean.narrow(0, offset, n).reshape(p.shape()).cast(p.dtype())));
            offset += n;
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

/// What `average_gradients` did: how many buckets it exchanged and, for each, how many steps
/// (kernels and copies) of the gradients' schedule were still to run when its exchange
/// started (more than 0: it overlapped backward).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GradientSync {
    pub buckets: usize,
    pub steps_left_at_send: Vec<usize>,
}

/// Consecutive runs of `grads` of one dtype and about `bucket_bytes` each (at least one
/// tensor per bucket).
fn buckets_of(grads: &[&Tensor], bucket_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < grads.len() {
        let (dtype, mut bytes, mut end) = (grads[start].dtype(), grads[start].nbytes(), start + 1);
        while end < grads.len() && bytes + grads[end].nbytes() <= bucket_bytes && grads[end].dtype() == dtype {
            bytes += grads[end].nbytes();
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// Buckets handed to the exchange thread in order (collectives pair up by order on every
/// rank), each as soon as it and all before it are ready.
struct SendQueue {
    tx: std::sync::mpsc::Sender<(usize, Vec<u8>)>,
    ready: Vec<Option<Vec<u8>>>,
    next: usize,
    steps_left_at_send: Vec<usize>,
}

impl SendQueue {
    fn new(tx: std::sync::mpsc::Sender<(usize, Vec<u8>)>, n: usize) -> SendQueue {
        SendQueue { tx, ready: vec![None; n], next: 0, steps_left_at_send: vec![0; n] }
    }
    fn has(&self, j: usize) -> bool {
        j < self.next || self.ready[j].is_some()
    }
    fn push(&mut self, j: usize, bytes: Vec<u8>, steps_left: usize) {
        self.ready[j] = Some(bytes);
        while let Some(bytes) = self.ready.get_mut(self.next).and_then(Option::take) {
            self.steps_left_at_send[self.next] = steps_left;
            // A closed channel means the exchange thread ended early: its results say why.
            let _ = self.tx.send((self.next, bytes));
            self.next += 1;
        }
    }
}

/// Each rank's bytes (already checked to be `t`'s size) as a tensor shaped like `t`, on its device.
fn tensors_like(parts: Vec<Vec<u8>>, t: &Tensor) -> Vec<Tensor> {
    let device = t.devices().remove(0);
    parts
        .into_iter()
        .map(|p| Tensor::from_uop(buffer_view(Buffer::with_data(&device, t.dtype(), p), &t.shape())))
        .collect()
}

/// One bucket's exchange, tagged with its index so that ranks out of step (different
/// parameters or bucket sizes) get an error, not each other's gradients.
fn exchange_bucket(transport: &dyn Transport, j: usize, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut tagged = (j as u64).to_le_bytes().to_vec();
    tagged.extend_from_slice(bytes);
    let parts = transport.all_gather_bytes(&tagged)?;
    parts
        .into_iter()
        .enumerate()
        .map(|(r, mut p)| {
            let tag = p.get(..8).map(|t| u64::from_le_bytes(t.try_into().expect("8 bytes")));
            if tag != Some(j as u64) || p.len() != tagged.len() {
                return Err(Error::Distributed(format!(
                    "average_gradients: rank {r} sent {} bytes as gradient bucket {tag:?}, rank {} {} bytes as bucket \
                     {j}: every rank must pass the same parameters (shapes, dtypes) and bucket size",
                    p.len().saturating_sub(8),
                    transport.rank(),
                    bytes.len()
                )));
            }
            p.drain(..8);
            Ok(p)
        })
        .collect()
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
