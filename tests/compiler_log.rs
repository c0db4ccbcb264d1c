//! VIZ's compiler log: a program's kernels with their AST, every named pass, opts, linear
//! program and source, and its launches with times, as JSON.

use ferrograd::{compiler_log, Tensor};

#[test]
fn the_log_holds_every_kernel_its_passes_and_launches() {
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
