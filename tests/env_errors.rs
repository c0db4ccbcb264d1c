//! Environment problems are `Err`s where they are met, never panics where tensors are made:
//! an unknown `DEV`, a missing C compiler, and a compiler that computes wrong results (caught
//! by the self-test's canary kernels). Each case runs in a child process with its own
//! environment (the test binary calls itself).

use std::process::Command;

const CASE: &str = "FERROGRAD_ENV_CASE";

/// In the child: make tensors, a random tensor and a layer, realize each; print what happened.
fn child() {
    use ferrograd::nn::Linear;
    use ferrograd::Tensor;
    let report = |what: &str, r: ferrograd::Result<Vec<f32>>| match r {
        Ok(v) => println!("{what}: ok {v:?}"),
        Err(e) => println!("{what}: err {e}"),
    };
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]);
    report("from_vec", (&x + 1.0).to_vec());
    report("rand", Tensor::rand([3]).to_vec());
    let layer = Linear::new(2, 3, true);
    report("linear", layer.forward(&x).to_vec());
    // The pad rows gcc's loop vectorizer got wrong; checked by the self-test before it runs.
    let p = Tensor::from_vec(vec![1.0625f32, -0.1875, 0.0625, -0.75, 2.0, -0.875], [3, 2]).pad(&[(1, 2), (0, 0)]);
    report("pad", p.to_vec());
}

fn run(envs: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let cache = std::env::temp_dir().join(format!("ferrograd-env-{}-{}", std::process::id(), envs.len()));
    let _ = std::fs::remove_dir_all(&cache);
    let out = Command::new(exe)
        .args(["--exact", "environment_errors_are_errs", "--nocapture", "--test-threads", "1"])
        .env(CASE, "1")
        .env("FERROGRAD_CACHE", &cache)
        .envs(envs.iter().copied())
        .output()
        .expect("child runs");
    let _ = std::fs::remove_dir_all(&cache);
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child panicked instead of returning errors:\n{text}");
    text
}

fn line<'a>(text: &'a str, what: &str) -> &'a str {
    let key = format!("{what}: ");
    text.lines()
        .find_map(|l| l.find(&key).map(|i| &l[i + key.len()..]))
        .unwrap_or_else(|| panic!("no `{what}` line in:\n{text}"))
}

#[test]
fn environment_errors_are_errs() {
    if std::env::var_os(CASE).is_some() {
        child();
        return;
    }
    // An unknown device: every realize says which devices exist.
    let text = run(&[("DEV", "bogus")]);
    for what in ["from_vec", "rand", "linear", "pad"] {
        let l = line(&text, what);
        assert!(l.starts_with("err") && l.contains("unknown device") && l.contains("CPU"), "{what}: {l}");
    }
    // No C compiler: the error names it and says what to do.
    let text = run(&[("DEV", "CPU"), ("CC", "/nonexistent/cc")]);
    for what in ["from_vec", "rand", "linear"] {
        let l = line(&text, what);
        assert!(l.starts_with("err") && l.contains("/nonexistent/cc") && l.contains("set CC"), "{what}: {l}");
    }
    // A compiler that miscompiles: gcc with its loop vectorizer forced back on (its flags come
    // after ferrograd's). The self-test's canaries catch it before any kernel of ours runs.
    if Command::new("gcc").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let dir = std::env::temp_dir().join(format!("ferrograd-badcc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cc = dir.join("gcc-vectorizing");
        std::fs::write(&cc, "#!/bin/sh\nexec gcc \"$@\" -O3 -ftree-loop-vectorize\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = run(&[("DEV", "CPU"), ("CC", cc.to_str().unwrap())]);
        let _ = std::fs::remove_dir_all(&dir);
        let l = line(&text, "pad");
        assert!(l.starts_with("err") && l.contains("wrong result") && l.contains("gcc-vectorizing"), "pad: {l}");
    }
}
