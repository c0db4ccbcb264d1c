//! The NULL device: graphs schedule, render and "run" without memory, a compiler or kernels;
//! reads return zeros.

use ferrograd::runtime::get_device;
use ferrograd::tensor::with_default_device;
use ferrograd::Tensor;

#[test]
fn null_schedules_and_renders_but_computes_nothing() {
    with_default_device("NULL", || {
        let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]);
        let b = Tensor::full([2, 2], 3.0);
        let before = ferrograd::engine::kernels_run();
        let out = ((&a * &b + 1.0).relu() * 2.0).sum();
        assert_eq!(out.device(), "NULL");
        assert_eq!(out.to_vec::<f32>().unwrap(), vec![0.0], "NULL reads zeros");
        assert!(ferrograd::engine::kernels_run() > before, "the kernel went through the engine");
    });
}

#[test]
fn null_kernels_are_the_c_a_cpu_would_compile() {
    let dev = get_device("NULL").unwrap();
    assert_eq!(dev.name(), "NULL");
    let t = with_default_device("NULL", || {
        (Tensor::arange(16).cast(ferrograd::DType::F32).reshape([4, 4]).exp2()).sum_axis(1)
    });
    let sched = ferrograd::schedule::create_schedule(&[t.uop()]);
    let kernel = sched.items.iter().find(|i| i.kind == ferrograd::schedule::ItemKind::Kernel).expect("one kernel");
    let spec = ferrograd::codegen::get_program(&kernel.ast, dev.renderer(), None);
    assert!(spec.src.contains("void ") && spec.src.contains(&spec.name), "C source with the kernel:\n{}", spec.src);
    assert_eq!(dev.compile(&[std::sync::Arc::new(spec)]).unwrap().len(), 1);
}

#[test]
fn null_copies_check_sizes() {
    let dev = get_device("NULL").unwrap();
    let m = dev.alloc(16).unwrap();
    assert!(dev.copy_in(&m, &[1u8; 16]).is_ok());
    let err = dev.copy_in(&m, &[1u8; 8]).unwrap_err().to_string();
    assert!(err.contains("NULL") && err.contains("8") && err.contains("16"), "{err}");
    let mut back = [7u8; 16];
    dev.copy_out(&m, &mut back).unwrap();
    assert_eq!(back, [0u8; 16]);
}
