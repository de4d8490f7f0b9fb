//! Progress of long work (`bench`, `loadgen`) on standard error, only when standard error
//! is a terminal: a 10-minute run is not a silent one, and piped output stays clean.
//!
//! The work counts what it has done in a shared atomic; a reporter thread redraws one
//! status line twice a second. The reporter formats into a stack buffer and writes to the
//! unbuffered standard error, so it allocates nothing while it runs: `bench` counts every
//! allocation of the process while it measures.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the status line is redrawn.
const EVERY: Duration = Duration::from_millis(500);

/// A running progress line; [`Progress::done`] (or drop) erases it.
pub struct Progress {
    count: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the status line shows: the label, the work done and, when known, the total
/// (iterations for `bench`, seconds for `loadgen`).
#[derive(Clone, Copy)]
pub enum Total {
    Count(u64),
    Time(Duration),
}

impl Progress {
    /// Starts the line when standard error is a terminal; otherwise counting only.
    pub fn start(label: &'static str, total: Total) -> Progress {
        Progress::start_if(std::io::stderr().is_terminal(), label, total)
    }

    /// [`Progress::start`] with the terminal test decided by the caller (tests).
    pub fn start_if(enabled: bool, label: &'static str, total: Total) -> Progress {
        let count = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = if enabled {
            let (count, stop) = (count.clone(), stop.clone());
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || report(label, total, &count, &stop))
                .ok()
        } else {
            None
        };
        Progress {
            count,
            stop,
            thread,
        }
    }

    /// The counter the work adds to; `None` when nothing is shown (saves the add).
    pub fn counter(&self) -> Option<&AtomicU64> {
        self.thread.as_ref().map(|_| &*self.count)
    }

    /// Whether a status line is drawn.
    pub fn shown(&self) -> bool {
        self.thread.is_some()
    }

    /// Stops the reporter and erases its line.
    pub fn done(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One status line into `buf` (no allocation): `\r` + erase-line + the text.
pub fn line(buf: &mut [u8], label: &str, done: u64, total: Total, elapsed: Duration) -> usize {
    let mut w = std::io::Cursor::new(buf);
    let secs = elapsed.as_secs();
    let _ = match total {
        Total::Count(n) => write!(
            w,
            "\r\x1b[2K{label}: {done}/{n} ({}%), {secs}s",
            done.saturating_mul(100) / n.max(1)
        ),
        Total::Time(d) => write!(
            w,
            "\r\x1b[2K{label}: {secs}s/{}s, {done} requests",
            d.as_secs()
        ),
    };
    w.position() as usize
}

fn report(label: &'static str, total: Total, count: &AtomicU64, stop: &AtomicBool) {
    let start = Instant::now();
    let mut buf = [0u8; 160];
    // Drawn at once (the user sees the work started), then every EVERY until stopped.
    loop {
        let n = line(
            &mut buf,
            label,
            count.load(Ordering::Relaxed),
            total,
            start.elapsed(),
        );
        let _ = std::io::stderr().write_all(&buf[..n]);
        std::thread::park_timeout(EVERY);
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let _ = std::io::stderr().write_all(b"\r\x1b[2K");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_the_count_or_the_time() {
        let mut buf = [0u8; 160];
        let n = line(
            &mut buf,
            "bench",
            250,
            Total::Count(1000),
            Duration::from_secs(3),
        );
        assert_eq!(&buf[..n], b"\r\x1b[2Kbench: 250/1000 (25%), 3s");
        let n = line(
            &mut buf,
            "loadgen",
            42,
            Total::Time(Duration::from_secs(30)),
            Duration::from_secs(12),
        );
        assert_eq!(&buf[..n], b"\r\x1b[2Kloadgen: 12s/30s, 42 requests");
        // A label too long for the buffer is cut, not a panic.
        let long = "x".repeat(400);
        let n = line(&mut buf, &long, 1, Total::Count(2), Duration::ZERO);
        assert_eq!(n, buf.len());
    }

    #[test]
    fn nothing_is_counted_or_shown_when_disabled() {
        let p = Progress::start_if(false, "bench", Total::Count(10));
        assert!(p.counter().is_none() && !p.shown());
        p.done();
        let p = Progress::start_if(true, "bench", Total::Count(10));
        assert!(p.counter().is_some() && p.shown());
        p.done();
    }
}
