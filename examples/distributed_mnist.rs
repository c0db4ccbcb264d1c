//! Data-parallel MNIST across processes (or machines): every rank holds the whole model, trains
//! on its slice of each global batch, and averages the gradients with the others through a
//! `distributed::Communicator` before the SGD step, as PyTorch's DistributedDataParallel does.
//!
//! ```text
//! mpirun -np 2 target/release/examples/distributed_mnist            # built with --features mpi
//! RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 target/release/examples/distributed_mnist &
//! RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 target/release/examples/distributed_mnist
//! ```
//!
//! `STEPS` (default 5), `BS` (the global batch, 128), `LR` (0.05), `SEED` (1), `BUCKET_KB` (16: the
//! gradients travel in three buckets, the first sent while backward still runs). Every rank draws
//! the same global batch (same seed) and keeps its slice. At the end the ranks compare their
//! parameters with each other (they must be identical) and each trains the same steps alone on
//! the whole global batches: the largest difference is printed and must be at most 1e-5. The
//! model has no batch statistics (they would be per rank, as in DDP without SyncBatchNorm).
//! `FAIL_RANK=r` makes rank `r` exit before its first gradient exchange, to see how the others
//! fail (an error naming it, within `DIST_TIMEOUT`).

use ferrograd::distributed::Communicator;
use ferrograd::helpers::getenv_int;
use ferrograd::nn::{get_parameters, Conv2d, Linear, Module};
use ferrograd::tensor::{Idx, PoolOpts};
use ferrograd::{DType, Tensor};

#[derive(Module)]
struct Net {
    conv: Conv2d,
    fc: Linear,
}

impl Net {
    fn forward(&self, x: &Tensor) -> Tensor {
        let x = self.conv.forward(&(x.cast(DType::F32) / 255.0)).relu().max_pool2d(2, &PoolOpts::default());
        self.fc.forward(&x.flatten_range(1, -1))
    }
}

/// Trains `steps` SGD steps from seed `seed`; with a communicator, on this rank's slice of each
/// global batch with averaged gradients. Returns the parameters, flattened, and the losses.
fn train(comm: Option<&Communicator>, data: &(Tensor, Tensor)) -> ferrograd::Result<(Vec<f32>, Vec<f32>)> {
    let (steps, bs) = (getenv_int("STEPS", 5) as usize, getenv_int("BS", 128) as usize);
    let lr = std::env::var("LR").ok().and_then(|v| v.parse().ok()).unwrap_or(0.05);
    Tensor::manual_seed(getenv_int("SEED", 1) as u64);
    let net = Net { conv: Conv2d::new(1, 8, 5), fc: Linear::new(8 * 12 * 12, 10, true) };
    let params = get_parameters(&net);
    let (rank, world) = comm.map_or((0, 1), |c| (c.rank(), c.world_size()));
    if bs % world != 0 {
        return Err(ferrograd::Error::Other(format!("BS={bs} does not split over {world} ranks")));
    }
    let (x_train, y_train) = data;
    let mut losses = Vec::new();
    for _ in 0..steps {
        let samples = Tensor::randint([bs], 0, x_train.shape()[0] as i64).realize()?;
        let mine = samples.narrow(0, rank * bs / world, bs / world);
        let (x, y) = (x_train.index(&[Idx::T(mine.clone())]), y_train.index(&[Idx::T(mine)]));
        for p in &params {
            p.set_grad(None);
        }
        let loss = ferrograd::tensor::train(|| {
            net.forward(&x).sparse_categorical_crossentropy(&y, -1, 0.0, Default::default())
        });
        loss.backward();
        if let Some(c) = comm {
            if std::env::var("FAIL_RANK").ok().and_then(|r| r.parse::<usize>().ok()) == Some(rank) {
                // A rank that dies before the exchange: the others' collective fails naming it.
                eprintln!("rank {rank}: exiting on purpose (FAIL_RANK)");
                std::process::exit(3);
            }
            c.average_gradients(&params, getenv_int("BUCKET_KB", 16) as usize * 1024)?;
        }
        for p in &params {
            p.assign(&(p.detach() - p.grad().expect("a gradient") * lr));
        }
        let mut outs: Vec<&Tensor> = params.iter().collect();
        outs.push(&loss);
        Tensor::realize_all(&outs)?;
        losses.push(loss.item::<f32>()?);
    }
    let flat = Tensor::cat(&params.iter().map(|p| p.flatten()).collect::<Vec<_>>().iter().collect::<Vec<_>>(), 0);
    Ok((flat.to_vec::<f32>()?, losses))
}

fn main() -> ferrograd::Result<()> {
    let comm = Communicator::from_env()?;
    let (rank, world) = (comm.rank(), comm.world_size());
    let (x_train, y_train, _, _) = ferrograd::nn::datasets::mnist()?;
    let data = (x_train, y_train);
    let start = std::time::Instant::now();
    let (params, losses) = train(Some(&comm), &data)?;
    let secs = start.elapsed().as_secs_f64();
    let per_step = secs * 1e3 / losses.len().max(1) as f64;
    println!("rank {rank} of {world}: losses {losses:.4?} ({secs:.2} s, {per_step:.1} ms per step)");

    // Every rank's parameters, compared bit for bit.
    let all = comm.all_gather(&Tensor::from_slice(&params))?.to_vec::<f32>()?;
    let same = all.chunks(params.len()).all(|p| p == params.as_slice());
    // The same steps in this process alone, on the whole global batches.
    let (alone, _) = train(None, &data)?;
    let worst = params.iter().zip(&alone).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    println!(
        "rank {rank} of {world}: parameters {} on all ranks; largest difference from one process on the global batch: {worst:.2e}",
        if same { "identical" } else { "DIFFERENT" }
    );
    comm.barrier()?;
    if !same || worst > 1e-5 {
        return Err(ferrograd::Error::Other(format!(
            "rank {rank}: data-parallel training does not match (identical: {same}, difference {worst:.2e})"
        )));
    }
    Ok(())
}
