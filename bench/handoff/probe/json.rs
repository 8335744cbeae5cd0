//! One JSON object per line on stdout: every measurement and every skip is a line a
//! script can parse.

use std::fmt::Write;

pub struct Line {
    text: String,
}

impl Line {
    pub fn new(probe: &str) -> Line {
        let mut line = Line { text: String::from("{") };
        line.push_key("probe");
        line.push_str_value(probe);
        line
    }

    pub fn str(mut self, key: &str, value: &str) -> Line {
        self.push_key(key);
        self.push_str_value(value);
        self
    }

    pub fn num(mut self, key: &str, value: f64) -> Line {
        self.push_key(key);
        if value.is_finite() {
            let _ = write!(self.text, "{}", round_sig(value));
        } else {
            self.text.push_str("null");
        }
        self
    }

    pub fn int(mut self, key: &str, value: i64) -> Line {
        self.push_key(key);
        let _ = write!(self.text, "{value}");
        self
    }

    pub fn bool(mut self, key: &str, value: bool) -> Line {
        self.push_key(key);
        self.text.push_str(if value { "true" } else { "false" });
        self
    }

    pub fn print(mut self) {
        self.text.push('}');
        println!("{}", self.text);
    }

    fn push_key(&mut self, key: &str) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.push_str_value(key);
        self.text.push(':');
    }

    fn push_str_value(&mut self, value: &str) {
        self.text.push('"');
        for c in value.chars() {
            match c {
                '"' => self.text.push_str("\\\""),
                '\\' => self.text.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.text, "\\u{:04x}", c as u32);
                }
                c => self.text.push(c),
            }
        }
        self.text.push('"');
    }
}

/// Five significant digits: enough for timings, short enough to read.
fn round_sig(value: f64) -> f64 {
    if value == 0.0 {
        return 0.0;
    }
    let digits = 5 - value.abs().log10().ceil() as i32;
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// Reports a step that could not run, and why; the probe then stops with status 0.
pub fn skip(stage: &str, reason: &str) {
    Line::new("skip").str("stage", stage).str("reason", reason).print();
}

/// A GPU wait that never ends: report it and leave at once, without the destructors,
/// which would wait on the same queue or stream forever.
pub fn fatal(message: &str) -> ! {
    use std::io::Write;
    Line::new("error").str("message", message).print();
    let _ = std::io::stdout().flush();
    // SAFETY: _exit ends the process without running anything else; stdout is flushed.
    unsafe { libc::_exit(3) }
}
