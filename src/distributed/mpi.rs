//! Ranks started by an MPI launcher (`mpirun -np N`; cargo feature `mpi`, the `mpi` crate over
//! the system's MPI, e.g. Debian's OpenMPI: `apt-get install openmpi-bin libopenmpi-dev`). An
//! exchange is MPI's own all-gather of the byte counts, then of the bytes. MPI has no timeouts:
//! a rank that dies is reported by the launcher, which ends the others (OpenMPI names the rank
//! and its exit status).

use super::transport::Transport;
use crate::error::{Error, Result};
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use std::sync::Mutex;

/// MPI's world communicator and the universe that keeps MPI initialized (finalized on drop).
struct World {
    comm: SimpleCommunicator,
    _universe: Universe,
}

// SAFETY: MPI was initialized with `Threading::Serialized` or more (checked in `connect`), under
// which MPI may be called from any thread as long as no two calls overlap; the only access to
// `World` is through the `Mutex` in `Mpi`, so calls never overlap.
unsafe impl Send for World {}
// SAFETY: as above: shared references reach `World` only through the `Mutex`.
unsafe impl Sync for World {}

struct Mpi {
    world: Mutex<World>,
    rank: usize,
    size: usize,
}

/// Initializes MPI (once per process) and joins its world.
pub(crate) fn connect() -> Result<Box<dyn Transport>> {
    let Some((universe, provided)) = mpi::initialize_with_threading(Threading::Serialized) else {
        return Err(Error::Distributed("MPI is already initialized in this process: make one MPI communicator".into()));
    };
    if matches!(provided, Threading::Single | Threading::Funneled) {
        return Err(Error::Distributed(format!(
            "the MPI library provides only {provided:?} threading; ferrograd needs Serialized (OpenMPI gives it)"
        )));
    }
    let comm = universe.world();
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    Ok(Box::new(Mpi { world: Mutex::new(World { comm, _universe: universe }), rank, size }))
}

impl Transport for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.size
    }

    fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let world = self.world.lock().unwrap_or_else(|e| e.into_inner());
        let count = i32::try_from(data.len()).map_err(|_| {
            Error::Distributed(format!("an exchange of {} bytes is more than MPI counts (2^31)", data.len()))
        })?;
        let mut counts = vec![0i32; self.size];
        world.comm.all_gather_into(&count, &mut counts[..]);
        let displs: Vec<i32> = counts.iter().scan(0i32, |at, &c| Some(std::mem::replace(at, *at + c))).collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u8; total];
        // (A barrier's exchange is empty: MPI refuses buffers of no bytes, and needs none.)
        if total > 0 {
            let mut parts = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            world.comm.all_gather_varcount_into(data, &mut parts);
        }
        Ok(counts.iter().zip(&displs).map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec()).collect())
    }
}
