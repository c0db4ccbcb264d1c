//! VIZ's web page: a small HTTP server on 127.0.0.1 that serves one embedded page (`page.html`,
//! no network, no CDN) and the compiler's log as `/data.json` (`compiler_log`). `VIZ=1` starts it
//! when the program exits; [`serve`] starts it on demand, [`start`] in the background.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

const PAGE: &str = include_str!("page.html");

/// The port `VIZ_PORT` names (0: any free port).
fn port() -> u16 {
    crate::flags::int("VIZ_PORT").clamp(0, u16::MAX as i64) as u16
}

/// Binds 127.0.0.1:`port` (loopback only) and serves in a background thread; returns the
/// address it listens on. A port in use is an error that says what to do.
pub fn start(port: u16) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            format!("port {port} is in use (another VIZ page?): set VIZ_PORT to a free port, or VIZ_PORT=0 for any")
        } else {
            format!("cannot listen on 127.0.0.1:{port}: {e}")
        };
        std::io::Error::new(e.kind(), hint)
    })?;
    let addr = listener.local_addr()?;
    std::thread::Builder::new().name("viz".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            // One bad client must not stop the page.
            let _ = answer(stream);
        }
    })?;
    Ok(addr)
}

/// Serves the page on `VIZ_PORT` until the process is stopped (Ctrl-C), printing its address.
pub fn serve() -> std::io::Result<()> {
    let addr = start(port())?;
    eprintln!("VIZ: the compiler's log is at http://{addr}/ (Ctrl-C to stop)");
    loop {
        std::thread::park();
    }
}

/// Answers one HTTP request: `/` the page, `/data.json` the log, anything else 404.
fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    let mut request = String::new();
    BufReader::new(&stream).read_line(&mut request)?;
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let (status, kind, body) = match path {
        "/" | "/index.html" => ("200 OK", "text/html; charset=utf-8", PAGE.to_string()),
        "/data.json" => ("200 OK", "application/json", crate::compiler_log::to_json()),
        _ => ("404 Not Found", "text/plain", format!("no {path} here: the page is at /")),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

extern "C" fn serve_now() {
    // Nothing may unwind out of an atexit handler.
    let _ = std::panic::catch_unwind(|| {
        if let Err(e) = serve() {
            eprintln!("VIZ: {e}");
        }
    });
}

/// With `VIZ` set to anything but `0` or `json`: the page is served when the program exits
/// (registered once; the engine calls this at each realize while logging).
pub fn serve_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let wanted = crate::flags::text("VIZ").is_some_and(|v| !matches!(v.trim(), "0" | "json"));
    if !wanted {
        return;
    }
    ONCE.call_once(|| {
        extern "C" {
            fn atexit(callback: extern "C" fn()) -> std::os::raw::c_int;
        }
        // SAFETY: `atexit` is the C library's (std links it on every platform ferrograd builds
        // for); it only stores the pointer to `serve_now`, a plain `extern "C" fn` with no
        // captured state that lives for the whole program, and `serve_now` catches every panic,
        // so nothing unwinds into C when `exit` calls it.
        let registered = unsafe { atexit(serve_now) };
        if registered != 0 {
            eprintln!("VIZ: could not register the page to open at exit; call ferrograd::viz::serve() yourself");
        }
    });
}
