//! Tensors from several threads: realizes run one at a time (a realize lock, and a lock around
//! every access to host memory), so independent and shared graphs give the right values,
//! assigns are applied once, and each thread draws its own random numbers.

use ferrograd::Tensor;
use std::sync::{Arc, Barrier};

const THREADS: usize = 4;

fn on_threads<T: Send + 'static>(f: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let f = Arc::new(f);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let (f, start) = (f.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                f(i)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("thread")).collect()
}

#[test]
fn independent_graphs_from_four_threads() {
    let sums = on_threads(|i| {
        (0..5)
            .map(|k| {
                let n = 256 + 16 * k + i;
                let x = Tensor::from_vec((0..n).map(|j| (j % 7) as f32).collect::<Vec<_>>(), [n]);
                ((&x * 2.0 + 1.0).sum().item::<f32>().unwrap(), (0..n).map(|j| (j % 7) as f32 * 2.0 + 1.0).sum::<f32>())
            })
            .collect::<Vec<_>>()
    });
    for (i, per_thread) in sums.iter().enumerate() {
        for (got, want) in per_thread {
            assert_eq!(got, want, "thread {i}");
        }
    }
}

#[test]
fn one_shared_graph_realized_from_four_threads() {
    let a = Tensor::from_vec((0..64 * 64).map(|j| (j % 5) as f32 / 4.0).collect::<Vec<_>>(), [64, 64]);
    let shared = a.matmul(&a.t()).relu().sum_axis(1);
    let want: Vec<f32> = {
        let x: Vec<f32> = (0..64 * 64).map(|j| (j % 5) as f32 / 4.0).collect();
        (0..64)
            .map(|i| (0..64).map(|j| (0..64).map(|k| x[i * 64 + k] * x[j * 64 + k]).sum::<f32>().max(0.0)).sum())
            .collect()
    };
    let results = {
        let s = shared.clone();
        on_threads(move |_| s.to_vec::<f32>().unwrap())
    };
    for r in results {
        assert_eq!(r, want);
    }
}

#[test]
fn writes_to_rows_of_one_tensor_from_four_threads_all_land() {
    // Each thread assigns its own row many times; every assign reads the whole tensor and
    // writes it back (`where(row, value, tensor)`), so interleaved kernels would undo rows.
    let x = Tensor::zeros([THREADS, 8]).contiguous().realize().unwrap();
    let shared = x.clone();
    on_threads(move |i| {
        for k in 1..=25 {
            shared.shrink(&[(i, i + 1), (0, 8)]).assign(Tensor::full([1, 8], (i * 100 + k) as f64));
        }
    });
    let got = x.to_vec::<f32>().unwrap();
    for i in 0..THREADS {
        assert_eq!(&got[i * 8..(i + 1) * 8], &[(i * 100 + 25) as f32; 8], "row {i}");
    }
}

#[test]
fn concurrent_increments_are_never_applied_twice() {
    // Each thread adds 1 to one shared counter 25 times. Building `x + 1` reads x without a
    // lock, so two threads may both start from the same value (as in any language without a
    // user lock); what must never happen is one assign applied twice.
    let x = Tensor::zeros([1]).contiguous().realize().unwrap();
    let shared = x.clone();
    on_threads(move |_| {
        for _ in 0..25 {
            shared.assign(&shared + 1.0);
            shared.realize().unwrap();
        }
    });
    let v = x.item::<f32>().unwrap();
    assert!((1.0..=(THREADS * 25) as f32).contains(&v), "counter {v}: some increment was applied twice");
    // With the caller holding a lock around read-and-assign, none is lost either.
    let y = Tensor::zeros([1]).contiguous().realize().unwrap();
    let lock = Arc::new(std::sync::Mutex::new(y.clone()));
    on_threads(move |_| {
        for _ in 0..25 {
            let t = lock.lock().unwrap();
            t.assign(&*t + 1.0);
            t.realize().unwrap();
        }
    });
    assert_eq!(y.item::<f32>().unwrap(), (THREADS * 25) as f32);
}

#[test]
fn threads_draw_distinct_random_numbers_and_seeded_threads_repeat() {
    let draws = on_threads(|_| Tensor::rand([64]).to_vec::<f32>().unwrap());
    for i in 0..THREADS {
        for j in 0..i {
            assert_ne!(draws[i], draws[j], "threads {i} and {j} drew the same numbers");
        }
    }
    let seeded = |_: usize| {
        Tensor::manual_seed(1234);
        (0..3).map(|_| Tensor::rand([16]).to_vec::<f32>().unwrap()).collect::<Vec<_>>()
    };
    let a = on_threads(seeded);
    for (i, d) in a.iter().enumerate() {
        assert_eq!(d, &a[0], "thread {i}: the same seed must give the same numbers on every thread");
    }
    assert_ne!(a[0][0], a[0][1], "successive draws differ");
}
