//! Optimizations act on loop ranges and never change results: random valid opt lists applied to
//! real kernels give the same output as the unoptimized kernel. Runs on `DEV` (default CPU);
//! on a device with work groups (`DEV=CL`) the lists include LOCAL, GROUP and GROUPTOP.

use ferrograd::codegen::get_program;
use ferrograd::codegen::opts::{kernel_ranges, Opt, OptKind};
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::ConvOpts;
use ferrograd::uop::AxisType;
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

/// A random list of opts that is valid for the kernel (each amount divides its range).
fn random_opts(ast: &ferrograd::UOp, rng: &mut Rng, work_groups: bool) -> Vec<Opt> {
    let mut opts = Vec::new();
    let mut ast = ast.clone();
    for _ in 0..rng.below(4) + 1 {
        let ranges = kernel_ranges(&ast);
        if ranges.is_empty() {
            break;
        }
        let axis = rng.below(ranges.len());
        let r = &ranges[axis];
        if r.range_arg().1 == AxisType::Thread {
            continue; // one index per core: not splittable
        }
        let size = r.range_size();
        // Sometimes PADTO first: pad to a multiple that does not divide the size.
        let padding: Vec<i64> = (3..=8).filter(|d| size > *d && size % d != 0).collect();
        if matches!(r.range_arg().1, AxisType::Global | AxisType::Reduce) && !padding.is_empty() && rng.below(4) == 0 {
            let o = Opt { kind: OptKind::PadTo, axis, amount: padding[rng.below(padding.len())] };
            ast = ferrograd::codegen::opts::apply_opts(&ast, &[o]);
            opts.push(o);
            continue;
        }
        let divisors: Vec<i64> = (2..=size.min(8)).filter(|d| size % d == 0).collect();
        if divisors.is_empty() {
            continue;
        }
        let amount = divisors[rng.below(divisors.len())];
        let reduce = r.range_arg().1.is_reduce();
        // Work-group items so far (LOCAL and GROUP parts multiply).
        let in_group: i64 = ranges
            .iter()
            .filter(|r| matches!(r.range_arg().1, AxisType::Local | AxisType::Group))
            .map(|r| r.range_size())
            .product();
        let has_group = ranges.iter().any(|r| r.range_arg().1 == AxisType::Group);
        let choice = rng.below(if work_groups { 5 } else { 3 });
        let kind = match (reduce, choice) {
            (true, 3) if r.range_arg().1 == AxisType::Reduce && !has_group && in_group * amount <= 256 => {
                OptKind::Group
            }
            (true, 4) if r.range_arg().1 == AxisType::Reduce && !has_group && in_group * amount <= 256 => {
                OptKind::GroupTop
            }
            (false, 3 | 4) if r.range_arg().1 == AxisType::Global && in_group * amount <= 256 => OptKind::Local,
            (true, 0) => OptKind::Unroll,
            (true, _) => OptKind::Split,
            (false, 0) => OptKind::Upcast,
            (false, 1)
                if r.range_arg().1 == AxisType::Global && !opts.iter().any(|o: &Opt| o.kind == OptKind::Thread) =>
            {
                OptKind::Thread
            }
            (false, _) => OptKind::Split,
        };
        let o = Opt { kind, axis, amount };
        ast = ferrograd::codegen::opts::apply_opts(&ast, &[o]);
        opts.push(o);
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
    let work_groups = dev.renderer().target().has_local;
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
                let opts = random_opts(&item.ast, &mut rng, work_groups);
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
