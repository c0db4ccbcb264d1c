//! VIZ's compiler log: a program's kernels with their AST, every named pass, opts, linear
//! program and source, and its launches with times, as JSON.

use ferrograd::{compiler_log, Tensor};

/// The log is one per process: the tests that turn it on and read it take turns.
fn log_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn the_log_holds_every_kernel_its_passes_and_launches() {
    let _turn = log_lock();
    compiler_log::set_enabled(true);
    compiler_log::clear();
    // A shape no other test in this binary uses, so its kernels are compiled here.
    let a = Tensor::arange(37 * 11).cast(ferrograd::DType::F32).reshape([37, 11]);
    let b = Tensor::ones([11, 5]);
    let y = a.matmul(&b).relu().sum_axis(1);
    let values = y.to_vec::<f32>().unwrap();
    assert_eq!(values.len(), 37);
    compiler_log::set_enabled(false);
    let log: serde_json::Value = serde_json::from_str(&compiler_log::to_json()).unwrap();
    let kernels = log["kernels"].as_array().unwrap();
    assert!(!kernels.is_empty(), "{log}");
    for k in kernels {
        let name = k["name"].as_str().unwrap();
        let passes: Vec<&str> = k["passes"].as_array().unwrap().iter().map(|p| p["pass"].as_str().unwrap()).collect();
        for want in ["prepare/simplify", "prepare/collapse_reduces", "lowering/expand", "lowering/lower"] {
            assert!(passes.contains(&want), "{name}: passes {passes:?}");
        }
        // Each pass holds the kernel in the numbered-node form; the source defines the kernel.
        assert!(k["passes"][0]["kernel"].as_str().unwrap().contains("%0"), "{name}");
        assert!(k["source"].as_str().unwrap().contains(name), "{name}: the source names the kernel");
        assert!(k["ast"].as_str().unwrap().contains("SINK"), "{name}: {}", k["ast"]);
        assert!(!k["linear"].as_str().unwrap().is_empty());
        assert_eq!(k["device"], "CPU");
    }
    // The rules that fired, named by where they are written: the simplifier's in the simplify
    // passes.
    let fired: Vec<(String, String)> = kernels
        .iter()
        .flat_map(|k| k["passes"].as_array().unwrap().iter())
        .flat_map(|p| {
            p["rules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (p["pass"].as_str().unwrap().to_string(), r["rule"].as_str().unwrap().to_string()))
        })
        .collect();
    assert!(fired.iter().all(|(_, r)| r.starts_with("src/") && r.contains(".rs:")), "{fired:?}");
    assert!(fired.iter().any(|(p, r)| p.ends_with("simplify") && r.starts_with("src/uop/symbolic")), "{fired:?}");
    let launches = log["launches"].as_array().unwrap();
    assert!(launches.len() >= kernels.len(), "every compiled kernel ran");
    for l in launches {
        assert!(l["seconds"].as_f64().unwrap() > 0.0, "{l}");
        assert!(kernels.iter().any(|k| k["name"] == l["kernel"]), "{l} was compiled here");
    }
    let realizes: std::collections::BTreeSet<u64> = launches.iter().map(|l| l["realize"].as_u64().unwrap()).collect();
    assert!(!realizes.is_empty());
}

/// A raw HTTP GET on the VIZ server.
fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// The page and the log are served on loopback; a port in use is an error that says what to do.
#[test]
fn the_page_is_served_on_loopback() {
    let addr = ferrograd::viz::start(0).unwrap();
    assert!(addr.ip().is_loopback(), "{addr}");
    let (head, page) = get(addr, "/");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("text/html"), "{head}");
    assert!(
        page.contains("fetch(\"/data.json\")") && !page.contains("http://") && !page.contains("https://"),
        "no network"
    );
    let (head, json) = get(addr, "/data.json");
    assert!(head.contains("application/json"), "{head}");
    let log: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(log["kernels"].is_array() && log["launches"].is_array());
    let (head, _) = get(addr, "/elsewhere");
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    let err = ferrograd::viz::start(addr.port()).unwrap_err().to_string();
    assert!(err.contains("in use") && err.contains("VIZ_PORT"), "{err}");
}

/// The tensor graph of a realize, and which nodes each kernel computes: a max that is broadcast
/// back gets its own kernel, the subtraction, exp and sum fuse into the next one.
#[test]
fn each_realize_logs_its_tensor_graph_and_the_kernels_of_its_nodes() {
    let _turn = log_lock();
    compiler_log::set_enabled(true);
    compiler_log::clear();
    // Shapes no other test here uses. Realized first, so the graph starts at two buffers.
    let a = Tensor::arange(23 * 13).cast(ferrograd::DType::F32).reshape([23, 13]).realize().unwrap();
    let b = Tensor::ones([23, 13]).realize().unwrap();
    let x = &a * &b;
    let y = (&x - x.max_keepdim(1)).exp().sum_axis(1);
    assert_eq!(y.to_vec::<f32>().unwrap().len(), 23);
    compiler_log::set_enabled(false);
    let log: serde_json::Value = serde_json::from_str(&compiler_log::to_json()).unwrap();
    let graph = log["graphs"].as_array().unwrap().last().expect("the realize logged its graph").clone();
    let names: Vec<&str> = graph["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "the max, then the sum of exp: {names:?}");
    // The kernels are named as they were launched in that realize, in order.
    let realize = graph["realize"].as_u64().unwrap();
    let launched: Vec<&str> = log["launches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["realize"].as_u64() == Some(realize))
        .map(|l| l["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(launched, names);
    let nodes = graph["nodes"].as_array().unwrap();
    let kernels_of = |op: &str| -> Vec<Vec<u64>> {
        nodes
            .iter()
            .filter(|n| n["op"] == op)
            .map(|n| n["kernels"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect())
            .collect()
    };
    // The product is recomputed in both kernels (it is not a buffer); the max only in the first,
    // the subtraction's ADD (x + -max), the exp and the sum only in the second.
    assert_eq!(kernels_of("MUL").first(), Some(&vec![0, 1]), "{graph}");
    let reduces = kernels_of("REDUCE_AXIS");
    assert_eq!(reduces, vec![vec![0], vec![1]], "{graph}");
    assert!(kernels_of("EXP2").iter().all(|k| k == &vec![1]), "{graph}");
    // Sources come before their users; the two realized inputs are buffers no kernel computes.
    for (i, n) in nodes.iter().enumerate() {
        assert!(n["src"].as_array().unwrap().iter().all(|s| (s.as_u64().unwrap() as usize) < i), "{n}");
    }
    let inputs: Vec<&serde_json::Value> = nodes.iter().filter(|n| n["op"] == "BUFFER").collect();
    assert_eq!(inputs.len(), 2, "{graph}");
    for n in inputs {
        assert!(n["buffer"] == true && n["kernels"].as_array().unwrap().is_empty(), "{n}");
        assert_eq!(n["shape"], serde_json::json!([23 * 13]), "{n}");
    }
    // The output is a buffer of the second kernel.
    let out = nodes.last().unwrap();
    assert!(
        out["buffer"] == true && out["kernels"] == serde_json::json!([1]) && out["shape"] == serde_json::json!([23]),
        "{out}"
    );
    // Each node has its op, dtype and shape; the reduce names its op and axes.
    let reduce = nodes.iter().find(|n| n["op"] == "REDUCE_AXIS").unwrap();
    assert!(reduce["arg"].as_str().unwrap().starts_with("MAX"), "{reduce}");
    assert_eq!(reduce["dtype"], "float32");
    // Each rule that fired names the nodes it rewrote and what they became.
    let rules: Vec<&serde_json::Value> = log["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["passes"].as_array().unwrap().iter())
        .flat_map(|p| p["rules"].as_array().unwrap().iter())
        .collect();
    assert!(!rules.is_empty());
    for r in rules {
        let shown = r["nodes"].as_array().unwrap();
        let count = r["count"].as_u64().unwrap() as usize;
        assert_eq!(shown.len(), count.min(compiler_log::RULE_NODES_KEPT), "{r}");
        assert!(shown.iter().all(|n| n.as_str().unwrap().contains(" -> ")), "{r}");
    }
}
