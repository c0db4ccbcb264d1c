//! `ferrograd::distributed`: collectives between ranks that are threads (the in-process
//! transport) or TCP peers on localhost, data-parallel SGD equal to one process on the global
//! batch, and ranks that fail making the others fail, naming them, instead of hanging.

use ferrograd::distributed::{Communicator, GradientSync, ReduceOp};
use ferrograd::{DType, Tensor};
use std::time::{Duration, Instant};

/// Runs `f(comm)` on one thread per communicator; returns their results in rank order.
fn on_ranks<T: Send + 'static>(comms: Vec<Communicator>, f: fn(Communicator) -> T) -> Vec<T> {
    let handles: Vec<_> = comms.into_iter().map(|c| std::thread::spawn(move || f(c))).collect();
    handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn tcp_group(world: usize) -> Vec<Communicator> {
    let addr = format!("127.0.0.1:{}", free_port());
    let handles: Vec<_> = (0..world)
        .map(|r| {
            let addr = addr.clone();
            std::thread::spawn(move || Communicator::tcp(r, world, &addr, Duration::from_secs(20)).unwrap())
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn collectives(c: Communicator) -> Vec<Vec<i32>> {
    let r = c.rank() as i32;
    let t = Tensor::from_vec((0..6).map(|i| (i * 3 + r * 5) % 7 - 3).collect::<Vec<i32>>(), [6]);
    let get = |t: Tensor| t.to_vec::<i32>().unwrap();
    c.barrier().unwrap();
    vec![
        get(c.all_reduce(&t, ReduceOp::Sum).unwrap()),
        get(c.all_reduce(&t, ReduceOp::Max).unwrap()),
        get(c.all_reduce(&t, ReduceOp::Min).unwrap()),
        get(c.all_reduce(&t, ReduceOp::Product).unwrap()),
        get(c.broadcast(&t, 1).unwrap()),
        get(c.all_gather(&t).unwrap()),
        get(c.reduce_scatter(&t, ReduceOp::Sum).unwrap()),
        vec![c.rank() as i32, c.world_size() as i32],
    ]
}

/// What every rank of a world of 3 must get from `collectives`, computed on the host.
fn expected(rank: usize) -> Vec<Vec<i32>> {
    let of = |r: i32| (0..6).map(|i| (i * 3 + r * 5) % 7 - 3).collect::<Vec<i32>>();
    let all: Vec<Vec<i32>> = (0..3).map(of).collect();
    let fold = |f: fn(i32, i32) -> i32| (0..6).map(|i| all.iter().map(|v| v[i]).reduce(f).unwrap()).collect::<Vec<_>>();
    let sum = fold(|a, b| a + b);
    vec![
        sum.clone(),
        fold(i32::max),
        fold(i32::min),
        fold(|a, b| a * b),
        all[1].clone(),
        all.concat(),
        sum[rank * 2..rank * 2 + 2].to_vec(),
        vec![rank as i32, 3],
    ]
}

#[test]
fn collectives_are_exact_for_integers_in_process_and_over_tcp() {
    for (name, comms) in [("in-process", Communicator::in_process(3)), ("tcp", tcp_group(3))] {
        for (rank, got) in on_ranks(comms, collectives).into_iter().enumerate() {
            assert_eq!(got, expected(rank), "{name}, rank {rank}");
        }
    }
}

/// Three SGD steps of a small f64 MLP: rank r trains on its half of each global batch and
/// averages gradients; returns the final parameters and what each exchange reported.
fn train(comm: Option<Communicator>) -> (Vec<Vec<f64>>, Vec<GradientSync>) {
    let (rank, world) = comm.as_ref().map_or((0, 1), |c| (c.rank(), c.world_size()));
    let init = |n: usize, s: u64| {
        (0..n).map(|i| (((i as u64 * 2654435761 + s) % 1000) as f64 / 500.0 - 1.0) * 0.3).collect::<Vec<f64>>()
    };
    let w1 = Tensor::from_vec(init(8 * 16, 1), [8, 16]).requires_grad();
    let w2 = Tensor::from_vec(init(16 * 3, 2), [16, 3]).requires_grad();
    let params = [w1.clone(), w2.clone()];
    let mut syncs = Vec::new();
    for step in 0..3u64 {
        let global = 12;
        let x = Tensor::from_vec(init(global * 8, 10 + step), [global, 8]);
        let y = Tensor::from_vec((0..global as i32).map(|i| (i + step as i32) % 3).collect::<Vec<_>>(), [global]);
        let part = global / world;
        let (x, y) = (x.narrow(0, rank * part, part), y.narrow(0, rank * part, part));
        let loss = x.matmul(&w1).tanh().matmul(&w2).sparse_categorical_crossentropy(&y, -1, 0.0, Default::default());
        for p in &params {
            p.set_grad(None);
        }
        loss.backward();
        if let Some(c) = &comm {
            // A small bucket: the two gradients travel in two exchanges.
            syncs.push(c.average_gradients(&params, 64).unwrap());
        }
        for p in &params {
            p.assign(&(p.detach() - p.grad().unwrap() * 0.5));
        }
        Tensor::realize_all(&params.iter().collect::<Vec<_>>()).unwrap();
    }
    (params.iter().map(|p| p.cast(DType::F64).to_vec::<f64>().unwrap()).collect(), syncs)
}

#[test]
fn data_parallel_sgd_ends_with_identical_parameters_equal_to_one_process() {
    let (single, _) = train(None);
    for (name, comms) in [("in-process", Communicator::in_process(2)), ("tcp", tcp_group(2))] {
        let (ranks, syncs): (Vec<_>, Vec<_>) = on_ranks(comms, |c| train(Some(c))).into_iter().unzip();
        assert_eq!(ranks[0], ranks[1], "{name}: both ranks hold the same bits");
        for sync in syncs.iter().flatten() {
            // w2's gradient (the last parameter, bucket 0) is sent while the kernels of w1's
            // are still to run.
            assert_eq!(sync.buckets, 2, "{name}: {sync:?}");
            let left = &sync.steps_left_at_send;
            assert!(left[0] > left[1], "{name}: the first bucket overlapped backward: {sync:?}");
        }
        for (k, (got, want)) in ranks[0].iter().zip(&single).enumerate() {
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() <= 1e-12, "{name}: parameter {k}: {g} vs {w}");
            }
        }
    }
}

#[test]
fn a_rank_that_leaves_fails_the_others_naming_it() {
    // In process: rank 1 returns without the second exchange; its communicator is dropped.
    let mut comms = Communicator::in_process_with_timeout(3, Duration::from_secs(30));
    let c2 = comms.pop().unwrap();
    let c1 = comms.pop().unwrap();
    let c0 = comms.pop().unwrap();
    let t = || Tensor::from_vec(vec![1.0f32, 2.0], [2]);
    let start = Instant::now();
    let errs: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(|| {
            c0.barrier().unwrap();
            c0.all_reduce(&t(), ReduceOp::Sum).unwrap_err().to_string()
        });
        let b = s.spawn(move || {
            c1.barrier().unwrap();
            drop(c1);
        });
        let c = s.spawn(|| {
            c2.barrier().unwrap();
            c2.all_reduce(&t(), ReduceOp::Sum).unwrap_err().to_string()
        });
        b.join().unwrap();
        vec![a.join().unwrap(), c.join().unwrap()]
    });
    assert!(start.elapsed() < Duration::from_secs(20), "failed at once, not after the timeout");
    for e in &errs {
        assert!(e.contains("rank 1 left the group"), "{e}");
    }
    // A rank that hangs: the others fail after the timeout, naming it.
    let mut comms = Communicator::in_process_with_timeout(2, Duration::from_millis(300));
    let hung = comms.pop().unwrap();
    let e = comms[0].barrier().unwrap_err().to_string();
    assert!(e.contains("ranks [1] did not reach exchange 1") && e.contains("DIST_TIMEOUT"), "{e}");
    drop(hung);
    // Over TCP: rank 2 drops its connection before the exchange; ranks 0 and 1 name it.
    let mut comms = tcp_group(3);
    drop(comms.pop());
    let errs =
        on_ranks(comms, |c| c.all_reduce(&Tensor::from_vec(vec![1i32], [1]), ReduceOp::Sum).unwrap_err().to_string());
    for e in &errs {
        assert!(e.contains("rank 2") && (e.contains("closed its connection") || e.contains("failed")), "{e}");
    }
}

#[test]
fn ranks_bucketing_gradients_differently_get_errors_not_each_others_gradients() {
    let errs = on_ranks(Communicator::in_process_with_timeout(2, Duration::from_secs(30)), |c| {
        let w1 = Tensor::from_vec(vec![0.5f32; 8], [8]).requires_grad();
        let w2 = Tensor::from_vec(vec![0.25f32; 4], [4]).requires_grad();
        (w1.sum() * w2.sum()).backward();
        // Rank 0: one bucket per gradient; rank 1: both in one.
        let bucket = if c.rank() == 0 { 16 } else { 1 << 20 };
        c.average_gradients(&[w1, w2], bucket).unwrap_err().to_string()
    });
    assert!(errs[0].contains("rank 1 sent 48 bytes") && errs[0].contains("same parameters"), "{}", errs[0]);
    assert!(errs[1].contains("rank 0 sent 16 bytes") && errs[1].contains("bucket size"), "{}", errs[1]);
}

#[test]
fn bad_groups_are_errors_saying_what_to_fix() {
    let e = Communicator::tcp(3, 2, "127.0.0.1:1", Duration::from_secs(1)).err().unwrap().to_string();
    assert!(e.contains("rank 3 does not exist in a world of 2"), "{e}");
    let e = Communicator::tcp(1, 2, &format!("127.0.0.1:{}", free_port()), Duration::from_millis(200))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("could not reach rank 0"), "{e}");
    let comms = Communicator::in_process(2);
    let shapes = on_ranks(comms, |c| {
        let t = Tensor::from_vec(vec![1.0f32; 2 + c.rank()], [2 + c.rank()]);
        c.all_reduce(&t, ReduceOp::Sum).unwrap_err().to_string()
    });
    assert!(shapes[0].contains("same shape and dtype"), "{}", shapes[0]);
}

#[test]
fn nccl_without_its_feature_library_or_gpu_is_an_error_saying_what_to_do() {
    // This machine has no GPU: built without `nccl` it says how to build; built with it, which
    // library or device is missing. Never a panic from the loader.
    let e = Communicator::nccl(0, 1, &format!("127.0.0.1:{}", free_port()), Duration::from_secs(2))
        .err()
        .expect("no NCCL group without a GPU")
        .to_string();
    if cfg!(feature = "nccl") {
        assert!(
            e.contains("NCCL backend") && (e.contains("libcuda") || e.contains("libnccl") || e.contains("no GPU")),
            "{e}"
        );
    } else {
        assert!(e.contains("--features nccl") && e.contains("TCP"), "{e}");
    }
}
