//! Ranks in separate processes (`Communicator::tcp`), on one machine or several, connected over TCP through rank 0:
//! every rank connects to rank 0 (`MASTER_ADDR:MASTER_PORT`), which gathers each exchange and
//! sends everyone the whole list. A rank that fails closes its connection (or stops answering,
//! caught by the read timeout); rank 0 then tells the others which rank it was, so every rank's
//! collective returns an `Err` naming it instead of hanging.

use super::transport::Transport;
use crate::error::{Error, Result};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A frame length that announces an error message instead of data.
const FAILED: u64 = u64::MAX;

struct Tcp {
    rank: usize,
    world: usize,
    /// Rank 0: a connection per other rank (index r - 1); other ranks: the one to rank 0.
    peers: Mutex<Vec<TcpStream>>,
    timeout: Duration,
}

fn err(message: String) -> Error {
    Error::Distributed(message)
}

/// Joins the group as `rank` of `world`, rank 0 listening at `addr` (`host:port`); waits up to
/// `timeout` for the others to connect.
pub(crate) fn connect(rank: usize, world: usize, addr: &str, timeout: Duration) -> Result<Box<dyn Transport>> {
    if world == 0 || rank >= world {
        return Err(err(format!("rank {rank} does not exist in a world of {world} (check RANK and WORLD_SIZE)")));
    }
    let deadline = Instant::now() + timeout;
    let mut peers = Vec::new();
    if rank == 0 {
        let listener = TcpListener::bind(addr).map_err(|e| {
            err(format!("rank 0 could not listen on {addr}: {e} (is MASTER_PORT in use, is MASTER_ADDR this host?)"))
        })?;
        listener.set_nonblocking(true)?;
        let mut by_rank: Vec<Option<TcpStream>> = (1..world).map(|_| None).collect();
        while by_rank.iter().any(Option::is_none) {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false)?;
                    s.set_read_timeout(Some(timeout))?;
                    let r =
                        read_u64(&mut s).map_err(|e| err(format!("rank 0: a rank connected but sent no rank: {e}")))?;
                    match by_rank.get_mut((r as usize).wrapping_sub(1)) {
                        Some(slot @ None) => *slot = Some(s),
                        _ => {
                            return Err(err(format!(
                                "rank 0: a process connected as rank {r}, not one of 1..{world} or twice"
                            )))
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let missing: Vec<usize> = (1..world).filter(|r| by_rank[r - 1].is_none()).collect();
                        return Err(err(format!(
                            "rank 0: ranks {missing:?} did not connect to {addr} within {:.0} s (DIST_TIMEOUT)",
                            timeout.as_secs_f64()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(e.into()),
            }
        }
        peers.extend(by_rank.into_iter().flatten());
    } else {
        // Rank 0 may not be listening yet: retry until the deadline.
        let mut s = loop {
            match TcpStream::connect(addr) {
                Ok(s) => break s,
                Err(e) if Instant::now() >= deadline => {
                    return Err(err(format!(
                        "rank {rank}: could not reach rank 0 at {addr} within {:.0} s: {e}",
                        timeout.as_secs_f64()
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        s.set_read_timeout(Some(timeout))?;
        s.write_all(&(rank as u64).to_le_bytes())?;
        peers.push(s);
    }
    for p in &peers {
        p.set_nodelay(true)?;
    }
    Ok(Box::new(Tcp { rank, world, peers: Mutex::new(peers), timeout }))
}

fn read_u64(s: &mut TcpStream) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    s.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_frame(s: &mut TcpStream) -> std::io::Result<std::result::Result<Vec<u8>, String>> {
    let len = read_u64(s)?;
    let n = if len == FAILED { read_u64(s)? } else { len };
    let mut data = vec![0u8; n as usize];
    s.read_exact(&mut data)?;
    Ok(if len == FAILED { Err(String::from_utf8_lossy(&data).into_owned()) } else { Ok(data) })
}

fn write_frame(s: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    s.write_all(&(data.len() as u64).to_le_bytes())?;
    s.write_all(data)
}

impl Tcp {
    /// What a failed read or write from rank `r` means.
    fn lost(&self, r: usize, e: std::io::Error) -> Error {
        match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => err(format!(
                "rank {}: rank {r} did not answer within {:.0} s (it hangs or failed; DIST_TIMEOUT)",
                self.rank,
                self.timeout.as_secs_f64()
            )),
            _ => err(format!("rank {}: rank {r} closed its connection (it exited or failed): {e}", self.rank)),
        }
    }
}

impl Transport for Tcp {
    fn rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.world
    }

    fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if self.world == 1 {
            return Ok(vec![data.to_vec()]);
        }
        if self.rank != 0 {
            write_frame(&mut peers[0], data).map_err(|e| self.lost(0, e))?;
            let n = read_u64(&mut peers[0]).map_err(|e| self.lost(0, e))?;
            if n == FAILED {
                let len = read_u64(&mut peers[0]).map_err(|e| self.lost(0, e))?;
                let mut msg = vec![0u8; len as usize];
                peers[0].read_exact(&mut msg).map_err(|e| self.lost(0, e))?;
                return Err(err(format!("rank {}: {}", self.rank, String::from_utf8_lossy(&msg))));
            }
            return (0..n)
                .map(|_| match read_frame(&mut peers[0]).map_err(|e| self.lost(0, e))? {
                    Ok(d) => Ok(d),
                    Err(m) => Err(err(m)),
                })
                .collect();
        }
        let mut all = vec![data.to_vec()];
        for r in 1..self.world {
            let got = read_frame(&mut peers[r - 1]).map_err(|e| self.lost(r, e));
            match got {
                Ok(Ok(d)) => all.push(d),
                Ok(Err(m)) => return Err(err(m)),
                Err(e) => {
                    // Tell the ranks still there which one failed, then fail here too.
                    let msg = format!("rank {r} failed during an exchange ({e})");
                    for (k, p) in peers.iter_mut().enumerate() {
                        if k + 1 != r {
                            let _ = p.write_all(&FAILED.to_le_bytes());
                            let _ = write_frame(p, msg.as_bytes());
                        }
                    }
                    return Err(e);
                }
            }
        }
        for r in 1..self.world {
            let p = &mut peers[r - 1];
            let sent = p
                .write_all(&(all.len() as u64).to_le_bytes())
                .and_then(|_| all.iter().try_for_each(|d| write_frame(p, d)));
            sent.map_err(|e| self.lost(r, e))?;
        }
        Ok(all)
    }
}
