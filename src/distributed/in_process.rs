//! Ranks that are threads of one process (`Communicator::in_process`) (for tests, and for several devices driven
//! from several threads): exchanges meet in shared memory. A rank whose communicator is dropped
//! (its thread returned or panicked) has left: the others' next exchange is an `Err` naming it.

use super::transport::Transport;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One exchange: each rank's bytes (`None` until it arrives) and how many ranks have read them.
type Round = (Vec<Option<Vec<u8>>>, usize);

#[derive(Default)]
struct State {
    /// Exchange number → its round.
    rounds: HashMap<u64, Round>,
    left: Vec<bool>,
}

struct Shared {
    state: Mutex<State>,
    arrived: Condvar,
    size: usize,
}

struct Rank {
    shared: Arc<Shared>,
    rank: usize,
    /// The number of this rank's next exchange (every rank calls the collectives in the same
    /// order, so equal numbers meet).
    next: Mutex<u64>,
    timeout: Duration,
}

/// Transports for `size` ranks, one per thread, waiting `timeout` for each other.
pub(crate) fn group(size: usize, timeout: Duration) -> Vec<Box<dyn Transport>> {
    assert!(size > 0, "in_process::group: needs at least one rank");
    let state = State { rounds: HashMap::new(), left: vec![false; size] };
    let shared = Arc::new(Shared { state: Mutex::new(state), arrived: Condvar::new(), size });
    (0..size)
        .map(|rank| Box::new(Rank { shared: shared.clone(), rank, next: Mutex::new(0), timeout }) as Box<dyn Transport>)
        .collect()
}

impl Transport for Rank {
    fn rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.shared.size
    }

    fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let round = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            *next += 1;
            *next
        };
        let size = self.shared.size;
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let entry = state.rounds.entry(round).or_insert_with(|| (vec![None; size], 0));
        entry.0[self.rank] = Some(data.to_vec());
        self.shared.arrived.notify_all();
        let deadline = Instant::now() + self.timeout;
        loop {
            let (slots, _) = &state.rounds[&round];
            let missing: Vec<usize> = (0..size).filter(|&r| slots[r].is_none()).collect();
            if missing.is_empty() {
                break;
            }
            if let Some(&gone) = missing.iter().find(|&&r| state.left[r]) {
                return Err(Error::Distributed(format!(
                    "rank {}: rank {gone} left the group before exchange {round} (its thread ended or failed)",
                    self.rank
                )));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Distributed(format!(
                    "rank {}: ranks {missing:?} did not reach exchange {round} within {:.0} s (DIST_TIMEOUT)",
                    self.rank,
                    self.timeout.as_secs_f64()
                )));
            }
            state = self.shared.arrived.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        let entry = state.rounds.get_mut(&round).expect("the round");
        let out: Vec<Vec<u8>> = entry.0.iter().map(|s| s.clone().expect("arrived")).collect();
        entry.1 += 1;
        if entry.1 == size {
            state.rounds.remove(&round);
        }
        Ok(out)
    }
}

impl Drop for Rank {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        state.left[self.rank] = true;
        self.shared.arrived.notify_all();
    }
}
