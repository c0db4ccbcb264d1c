//! Optimizations act on loop ranges and never change results: random valid opt lists applied to
//! real kernels give the same output as the unoptimized kernel. Runs on `DEV` (default CPU);
//! on a device with work groups (`DEV=CL`) the lists include LOCAL, GROUP and GROUPTOP.

use ferrograd::codegen::opts::{apply_opts, candidate_opts, check_opt, kernel_ranges, Opt, OptKind};
use ferrograd::codegen::{get_program, prepare};
use ferrograd::renderer::Target;
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::ConvOpts;
use ferrograd::Tensor;
use std::sync::Arc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random list of opts that is valid for the kernel (`ast` as `prepare` leaves it): each
/// step picks one of the candidates BEAM would try, or sometimes a PADTO to a small multiple
/// that does not divide the range.
fn random_opts(ast: &ferrograd::UOp, rng: &mut Rng, target: &Target) -> Vec<Opt> {
    let mut opts: Vec<Opt> = Vec::new();
    for _ in 0..rng.below(4) + 1 {
        let applied = apply_opts(ast, &opts, target).expect("valid so far");
        let ranges = kernel_ranges(&applied);
        let mut choices = candidate_opts(ast, &opts, target);
        for (axis, r) in ranges.iter().enumerate() {
            let size = r.range_size();
            for amount in (3..=8).filter(|d| size > *d && size % d != 0) {
                let o = Opt { kind: OptKind::PadTo, axis, amount };
                if check_opt(&ranges, &o, target).is_ok() && rng.below(4) == 0 {
                    choices.push(o);
                }
            }
        }
        if choices.is_empty() {
            break;
        }
        opts.push(choices[rng.below(choices.len())]);
    }
    opts
}

fn device_name() -> String {
    std::env::var("DEV").unwrap_or_else(|_| "CPU".into())
}

fn run(item: &ferrograd::schedule::ScheduleItem, opts: Option<&[Opt]>) -> Vec<f32> {
    let dev = get_device(&device_name()).unwrap();
    let spec = Arc::new(get_program(&item.ast, dev.renderer(), opts));
    let prog = dev.compile(&[spec]).unwrap().remove(0);
    let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog.launch(&mems, &[], false).unwrap();
    dev.synchronize().unwrap();
    let bytes = item.bufs[0].to_bytes().unwrap();
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn random_opts_never_change_results() {
    let dev = get_device(&device_name()).unwrap();
    let target = dev.renderer().target().clone();
    let work_groups = target.has_local;
    Tensor::manual_seed(3);
    let a = Tensor::randn([12, 8]).realize().unwrap();
    let b = Tensor::randn([8, 6]).realize().unwrap();
    let x = Tensor::randn([2, 3, 6, 6]).realize().unwrap();
    let w = Tensor::randn([4, 3, 3, 3]).realize().unwrap();
    let c = Tensor::randn([4, 512]).realize().unwrap();
    let graphs = [
        c.sum_axis(1),
        (c.reshape([4, 1, 512]) * c.reshape([1, 4, 512])).sum_axis(2).max_axis(1),
        a.matmul(&b),
        (a.exp() * 2.0 + 1.0).relu(),
        a.sum_axis(1),
        a.max_axis(0),
        x.conv2d(&w, None, &ConvOpts::default().padding(1)),
        (a.reshape([12, 1, 8]) * b.t().reshape([1, 6, 8])).sum_axis(2).softmax(1),
    ];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut tried, mut grouped, mut local, mut padded) = (0, 0, 0, 0);
    for g in &graphs {
        let sched = create_schedule(&[g.uop()]);
        for item in &sched.items {
            let want = run(item, Some(&[]));
            for _ in 0..6 {
                let opts = random_opts(&prepare(&item.ast), &mut rng, &target);
                let got = run(item, Some(&opts));
                for (i, (x, y)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (x - y).abs() <= 1e-5 + 1e-4 * y.abs(),
                        "{}: opts {opts:?}: element {i} is {x}, unoptimized {y}",
                        item.ast.toposort().len()
                    );
                }
                tried += 1;
                grouped += opts.iter().any(|o| matches!(o.kind, OptKind::Group | OptKind::GroupTop)) as usize;
                local += opts.iter().any(|o| o.kind == OptKind::Local) as usize;
                padded += opts.iter().any(|o| o.kind == OptKind::PadTo) as usize;
            }
        }
    }
    assert!(tried >= 48);
    assert!(padded >= 3, "only {padded} lists with PADTO");
    if work_groups {
        assert!(grouped >= 3 && local >= 3, "only {grouped} lists with GROUP and {local} with LOCAL");
    }
}
