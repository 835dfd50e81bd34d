//! Colours, time units and names shared by the plots.

use plotters::style::RGBColor;

/// The bundled arms' colours, the same in every plot of every report, so a
/// reader who learned that `default` is blue can tell it at a glance
/// elsewhere: Tableau 10, then two of Tableau 20's light tones.
const KNOWN_ARMS: [(&str, RGBColor); 12] = [
    ("default", RGBColor(31, 119, 180)),
    ("binpack", RGBColor(255, 127, 14)),
    ("random", RGBColor(44, 160, 44)),
    ("target-load", RGBColor(214, 39, 40)),
    ("load-aware", RGBColor(148, 103, 189)),
    ("cost-binpack", RGBColor(140, 86, 75)),
    ("agmarl", RGBColor(227, 119, 194)),
    ("agmarl-untrained", RGBColor(127, 127, 127)),
    ("agmarl-analytic", RGBColor(188, 189, 34)),
    ("agmarl-nognn", RGBColor(23, 190, 207)),
    ("agmarl-linear", RGBColor(174, 199, 232)),
    ("agmarl-nostress", RGBColor(255, 187, 120)),
];

/// Tableau 20's other light tones, for arms of a user's own (a profile file,
/// an external scheduler), in the order they come.
const OTHER_ARMS: [RGBColor; 8] = [
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
    RGBColor(199, 199, 199),
];

/// Each arm's colour: a bundled arm's own everywhere ([`KNOWN_ARMS`]), any
/// other's by its place among the other arms of the input, so that an arm
/// keeps its colour across every plot of a report.
#[derive(Debug, Clone)]
pub(super) struct Palette {
    others: Vec<String>,
}

fn known(arm: &str) -> Option<RGBColor> {
    KNOWN_ARMS.iter().find(|(name, _)| *name == arm).map(|&(_, c)| c)
}

impl Palette {
    pub fn new<'a>(arms: impl Iterator<Item = &'a str>) -> Self {
        Palette {
            others: arms.filter(|a| known(a).is_none()).map(str::to_string).collect(),
        }
    }

    pub fn colour(&self, arm: &str) -> RGBColor {
        if let Some(c) = known(arm) {
            return c;
        }
        let i = match self.others.iter().position(|a| a == arm) {
            Some(i) => i,
            // an arm that only appears in the Pareto points
            None => self.others.len() + arm.bytes().map(usize::from).sum::<usize>(),
        };
        OTHER_ARMS[i % OTHER_ARMS.len()]
    }
}

/// Viridis anchors: perceptually uniform, dark for empty, yellow for full.
const VIRIDIS: [(f64, f64, f64); 5] = [
    (68.0, 1.0, 84.0),
    (59.0, 82.0, 139.0),
    (33.0, 145.0, 140.0),
    (94.0, 201.0, 98.0),
    (253.0, 231.0, 37.0),
];

/// The colour of utilisation `u` (clamped to [0, 1]).
pub(super) fn heat(u: f64) -> RGBColor {
    let u = if u.is_finite() { u.clamp(0.0, 1.0) } else { 0.0 };
    let scaled = u * (VIRIDIS.len() - 1) as f64;
    let i = (scaled.floor() as usize).min(VIRIDIS.len() - 2);
    let f = scaled - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Nodes that cannot run pods (NotReady) in the heatmap.
pub(super) const NOT_READY: RGBColor = RGBColor(215, 215, 215);

/// Seconds or minutes or hours, whichever keeps the axis numbers readable.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimeUnit {
    pub name: &'static str,
    pub seconds: f64,
}

impl TimeUnit {
    pub fn for_span(seconds: f64) -> TimeUnit {
        if seconds > 3.0 * 3600.0 {
            TimeUnit {
                name: "h",
                seconds: 3600.0,
            }
        } else if seconds > 600.0 {
            TimeUnit {
                name: "min",
                seconds: 60.0,
            }
        } else {
            TimeUnit {
                name: "s",
                seconds: 1.0,
            }
        }
    }

    pub fn of_ms(&self, ms: u64) -> f64 {
        ms as f64 / 1000.0 / self.seconds
    }

    pub fn axis_label(&self) -> String {
        format!("time ({})", self.name)
    }
}

/// A round bucket width, in ms, that splits `end_ms` into about `target`
/// buckets.
pub(super) fn bucket_width_ms(end_ms: u64, target: u64) -> u64 {
    const STEPS_S: [u64; 16] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600, 86_400,
    ];
    let ideal = end_ms / target.max(1);
    STEPS_S
        .iter()
        .map(|s| s * 1000)
        .find(|&w| w >= ideal)
        .unwrap_or(86_400_000)
}

/// A bucket width in words: "10 s", "5 min", "1 h".
pub(super) fn describe_width(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// An arm name as a file-stem part: ASCII letters, digits, '-' and '_' kept,
/// anything else '-'.
pub(super) fn file_stem(arm: &str) -> String {
    let s: String = arm
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() { "arm".to_string() } else { s }
}

/// `[lo, hi]` widened so that a flat series still gets a usable axis.
pub(super) fn padded_range(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else if lo == 0.0 {
        (-0.5, 1.0)
    } else {
        let pad = lo.abs() * 0.1;
        (lo - pad, hi + pad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_runs_from_dark_to_yellow_and_clamps() {
        assert_eq!(heat(0.0), RGBColor(68, 1, 84));
        assert_eq!(heat(1.0), RGBColor(253, 231, 37));
        assert_eq!(heat(7.0), heat(1.0));
        assert_eq!(heat(f64::NAN), heat(0.0));
        assert_eq!(heat(0.5), RGBColor(33, 145, 140));
    }

    #[test]
    fn bucket_widths_are_round() {
        assert_eq!(bucket_width_ms(600_000, 40), 15_000);
        assert_eq!(bucket_width_ms(3_600_000, 40), 120_000);
        assert_eq!(bucket_width_ms(0, 40), 1000);
        assert_eq!(describe_width(120_000), "2 min");
        assert_eq!(describe_width(15_000), "15 s");
    }

    #[test]
    fn stems_and_colours() {
        assert_eq!(file_stem("agmarl v2/β"), "agmarl-v2--");
        assert_eq!(file_stem(""), "arm");
        // a bundled arm has its colour whatever else is in the report
        let a = Palette::new(["default", "agmarl"].into_iter());
        let b = Palette::new(["agmarl", "mine", "binpack", "theirs"].into_iter());
        assert_ne!(a.colour("default"), a.colour("agmarl"));
        assert_eq!(a.colour("agmarl"), b.colour("agmarl"));
        // the others take the spare tones in order, none a bundled arm's
        assert_eq!(b.colour("mine"), OTHER_ARMS[0]);
        assert_eq!(b.colour("theirs"), OTHER_ARMS[1]);
        let all: Vec<RGBColor> = KNOWN_ARMS.iter().map(|&(_, c)| c).chain(OTHER_ARMS).collect();
        for (i, c) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(c), "colour {c:?} twice");
        }
    }

    #[test]
    fn flat_ranges_are_widened() {
        assert_eq!(padded_range(0.0, 0.0), (-0.5, 1.0));
        let (lo, hi) = padded_range(3.0, 3.0);
        assert!(lo < 3.0 && hi > 3.0);
        assert_eq!(padded_range(f64::NAN, 1.0), (0.0, 1.0));
    }
}
