//! A persistent pool of worker threads (one per core) for kernels with a THREAD axis: a launch
//! hands each worker one core index and waits for all of them. No thread is created per launch.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A borrowed task: `run(core)` for one core index.
type Task = dyn Fn(usize) + Sync;

struct Job {
    task: *const Task,
    core: usize,
    done: Arc<(Mutex<usize>, Condvar)>,
}

// SAFETY: `task` points to a `Sync` closure that `ThreadPool::run` keeps alive (it blocks until
// every job has signalled `done`), so sending the pointer to another thread is sound.
unsafe impl Send for Job {}

pub struct ThreadPool {
    workers: Vec<Mutex<Sender<Job>>>,
}

impl ThreadPool {
    fn new(device: usize, n: usize) -> ThreadPool {
        let workers = (0..n)
            .map(|i| {
                let (tx, rx) = channel::<Job>();
                std::thread::Builder::new()
                    .name(format!("ferrograd-cpu{device}-{i}"))
                    .spawn(move || {
                        for job in rx {
                            // SAFETY: see `Job`; the closure lives until `done` reaches the count.
                            let task = unsafe { &*job.task };
                            task(job.core);
                            let (lock, cv) = &*job.done;
                            *lock.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                            cv.notify_all();
                        }
                    })
                    .expect("spawning a CPU worker thread");
                Mutex::new(tx)
            })
            .collect();
        ThreadPool { workers }
    }

    /// The process-wide pool of device `CPU` (`CPU:0`): one worker per core beyond the calling
    /// thread.
    pub fn global() -> &'static ThreadPool {
        ThreadPool::of_device(0)
    }

    /// The pool of device `CPU:index`: each CPU device has workers of its own (made on first
    /// use, kept for the process, as the device is).
    pub fn of_device(index: usize) -> &'static ThreadPool {
        static POOLS: OnceLock<Mutex<Vec<Option<&'static ThreadPool>>>> = OnceLock::new();
        let mut pools = POOLS.get_or_init(|| Mutex::new(Vec::new())).lock().unwrap_or_else(|e| e.into_inner());
        if pools.len() <= index {
            pools.resize(index + 1, None);
        }
        pools[index].get_or_insert_with(|| Box::leak(Box::new(ThreadPool::new(index, cores().saturating_sub(1)))))
    }

    /// Runs `task(0..n)`: core 0 on the calling thread, the others on the workers (round
    /// robin), and returns when all are done.
    pub fn run(&self, n: usize, task: &Task) {
        if n <= 1 || self.workers.is_empty() {
            (0..n).for_each(task);
            return;
        }
        let done = Arc::new((Mutex::new(0usize), Condvar::new()));
        // Erase the borrow's lifetime: the wait below keeps `task` alive for every job.
        let ptr: *const Task = task;
        for core in 1..n {
            let job = Job { task: ptr, core, done: done.clone() };
            let w = &self.workers[(core - 1) % self.workers.len()];
            if w.lock().unwrap_or_else(|e| e.into_inner()).send(job).is_err() {
                // A dead worker (it cannot happen unless a kernel aborted): run it here.
                task(core);
                *done.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            }
        }
        task(0);
        let (lock, cv) = &*done;
        let mut count = lock.lock().unwrap_or_else(|e| e.into_inner());
        while *count < n - 1 {
            count = cv.wait(count).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Number of cores kernels may use (`THREADS` overrides).
pub fn cores() -> usize {
    let n = crate::flags::int("THREADS");
    if n > 0 {
        return n as usize;
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}
