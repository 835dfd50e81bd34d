//! Every plot renders from hand-written records, as SVG and PNG, the same
//! bytes every time, and an empty input still gives plots ("no data").

mod common;

use common::*;
use results::decisions::{Basis, Level, StressPoint};
use results::plots::{
    ArmSeries, ArmStress, ParetoPoint, PlotInput, SeedSeries, SeedStress, StressInput, render_all, write_plots,
};
use results::series::{RunSeries, RunSeriesBuilder};
use schedlab_core::Record;
use schedlab_core::Time;

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

const EXPECTED: [&str; 8] = [
    "heatmap-default",
    "heatmap-binpack",
    "cluster-over-time",
    "restarts-over-time",
    "sched-latency-cdf",
    "pareto",
    "pareto-pairs",
    "mem-vs-failures",
];

fn series(records: &[Record]) -> RunSeries {
    let mut b = RunSeriesBuilder::new();
    for r in records {
        b.push(r);
    }
    b.finish().expect("consistent records")
}

fn input() -> PlotInput {
    let arm = |name: &str, crashes: u32| ArmSeries {
        arm: name.to_string(),
        // seeds out of order: "first seed" means the lowest
        runs: [2u64, 1]
            .into_iter()
            .map(|seed| SeedSeries {
                seed,
                series: series(&synthetic_run(seed, crashes)).into(),
            })
            .chain(std::iter::once(SeedSeries {
                seed: 3,
                series: series(&hand_run()).into(),
            }))
            .collect(),
    };
    PlotInput {
        intervals: Vec::new(),
        scenario: "hand_made".to_string(),
        arms: vec![arm("default", 0), arm("binpack", 3)],
        pareto: vec![
            ParetoPoint {
                arm: "default".into(),
                cost_usd: 0.02,
                failure_rate: 0.1,
                restarts: 1.0,
                on_front: true,
            },
            ParetoPoint {
                arm: "binpack".into(),
                cost_usd: 0.03,
                failure_rate: 0.4,
                restarts: 7.0,
                on_front: false,
            },
        ],
        stress: None,
        incomplete: None,
    }
}

fn assert_well_formed(plot: &results::plots::Plot) {
    let svg = plot.svg.trim_start();
    assert!(svg.starts_with("<svg"), "{}: {}", plot.name, &svg[..40.min(svg.len())]);
    assert!(plot.svg.trim_end().ends_with("</svg>"), "{}", plot.name);
    // the title is drawn as text (escaped as the SVG writer escapes it)
    assert!(
        plot.svg.contains(&plot.title.replace('&', "&amp;")),
        "{} lacks its title",
        plot.name
    );
    assert!(
        plot.svg.contains("font-family=\"DejaVu Sans, sans-serif\""),
        "{}",
        plot.name
    );
    assert!(plot.png.starts_with(&PNG_SIGNATURE), "{}", plot.name);
}

#[test]
fn every_plot_renders_as_svg_and_png() {
    let plots = render_all(&input()).unwrap();
    let names: Vec<&str> = plots.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, EXPECTED);
    for plot in &plots {
        assert_well_formed(plot);
        assert!(!plot.svg.contains("no data"), "{} says no data", plot.name);
        assert!(plot.title.contains("hand_made"), "{}", plot.title);
    }
    let by_name = |n: &str| plots.iter().find(|p| p.name == n).unwrap();
    // the first seed is the lowest one, and the legends name the arms
    assert!(by_name("heatmap-binpack").title.contains("seed 1"));
    assert!(by_name("cluster-over-time").svg.contains("binpack (seed 1)"));
    assert!(by_name("restarts-over-time").svg.contains("default (3 seeds)"));
    assert!(by_name("pareto").svg.contains("binpack (dominated)"));
    assert!(by_name("mem-vs-failures").svg.contains("r = "));
    // heatmap rows are named after the nodes
    assert!(by_name("heatmap-default").svg.contains("node-1"));
}

/// `input()` with decision records: `agmarl` in force on two seeds, its
/// level rising with time; `default` observed on one.
fn with_stress() -> PlotInput {
    let mut stress = StressInput::until(Time(40_000));
    let axis = stress.axis;
    let seed = |seed: u64, shift: f32| {
        let mut s = SeedStress::new(seed, Time(40_000), axis);
        for i in 0..40u64 {
            s.add(StressPoint {
                t: Time(i * 1000),
                score: (i as f32 / 40.0 + shift).min(1.0),
                level: Level::ALL[(i / 14) as usize],
            });
        }
        s
    };
    stress.arms = vec![
        ArmStress {
            arm: "binpack".into(),
            basis: Basis::InForce,
            runs: vec![seed(1, 0.0), seed(2, 0.1)],
        },
        ArmStress {
            arm: "default".into(),
            basis: Basis::Observed,
            runs: vec![seed(1, 0.05)],
        },
    ];
    PlotInput {
        stress: Some(stress),
        ..input()
    }
}

#[test]
fn decision_records_add_the_stress_plot_with_its_caption() {
    let plots = render_all(&with_stress()).unwrap();
    let names: Vec<&str> = plots.iter().map(|p| p.name.as_str()).collect();
    let mut expected = EXPECTED.to_vec();
    expected.push("stress-over-time");
    assert_eq!(names, expected);
    let stress = plots.last().unwrap();
    assert_well_formed(stress);
    assert!(!stress.svg.contains("no data"));
    assert!(
        stress.svg.contains("binpack (in force, 2 seeds)"),
        "legend names the basis"
    );
    assert!(stress.svg.contains("default (observed, 1 seed)"));
    assert!(
        stress.svg.contains("stressed") && stress.svg.contains("calm"),
        "level axis named"
    );
    let caption = stress.caption.as_deref().unwrap();
    assert!(
        caption.contains("mean over the seeds") && caption.contains("3 of 6 runs"),
        "{caption}"
    );
    // the same palette as the other plots: an arm keeps its colour
    assert_eq!(render_all(&with_stress()).unwrap(), plots);
    // without decision records the plot is left out, not drawn empty
    assert!(
        render_all(&input())
            .unwrap()
            .iter()
            .all(|p| p.name != "stress-over-time")
    );
}

#[test]
fn rendering_twice_is_byte_identical() {
    let a = render_all(&input()).unwrap();
    let b = render_all(&input()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn arms_differ_in_their_plots() {
    let plots = render_all(&input()).unwrap();
    // binpack crashes 3 times per pod on node 0; default never does
    assert_ne!(plots[0].png, plots[1].png);
}

#[test]
fn empty_input_gives_no_data_plots() {
    let empty = PlotInput {
        scenario: "empty".into(),
        ..PlotInput::default()
    };
    let plots = render_all(&empty).unwrap();
    assert_eq!(plots.len(), 6);
    for plot in &plots {
        assert_well_formed(plot);
        assert!(plot.svg.contains("no data"), "{}", plot.name);
    }
}

#[test]
fn arms_without_runs_or_samples_give_no_data() {
    let no_samples = series(&[node(0, 1000, 1000, 1.0), end(1000)]);
    let input = PlotInput {
        intervals: Vec::new(),
        scenario: "bare".into(),
        arms: vec![
            ArmSeries {
                arm: "idle".into(),
                runs: vec![SeedSeries {
                    seed: 1,
                    series: no_samples.into(),
                }],
            },
            ArmSeries {
                arm: "none".into(),
                runs: vec![],
            },
        ],
        pareto: vec![ParetoPoint {
            arm: "idle".into(),
            cost_usd: f64::NAN,
            failure_rate: 0.0,
            restarts: 0.0,
            on_front: true,
        }],
        stress: None,
        incomplete: None,
    };
    let plots = render_all(&input).unwrap();
    for plot in &plots {
        assert_well_formed(plot);
        // a run without restarts is data: a flat line at zero
        let expect_no_data = plot.name != "restarts-over-time";
        assert_eq!(plot.svg.contains("no data"), expect_no_data, "{}", plot.name);
    }
}

#[test]
fn write_plots_writes_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let plots = render_all(&input()).unwrap();
    let out = dir.path().join("plots");
    write_plots(&plots, &out).unwrap();
    for plot in &plots {
        let svg = std::fs::read_to_string(out.join(format!("{}.svg", plot.name))).unwrap();
        assert_eq!(svg, plot.svg);
        let png = std::fs::read(out.join(format!("{}.png", plot.name))).unwrap();
        assert_eq!(png, plot.png);
    }
    // a file where the folder should be: an error naming it, not a panic
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "x").unwrap();
    let err = write_plots(&plots, &blocked).unwrap_err().to_string();
    assert!(err.contains("file"), "{err}");
}

#[test]
fn a_partial_input_is_stamped_inside_every_plot() {
    let whole = render_all(&input()).unwrap();
    let partial = render_all(&PlotInput {
        incomplete: Some("INCOMPLETE: 5 of 6 runs".into()),
        ..input()
    })
    .unwrap();
    assert_eq!(whole.len(), partial.len());
    for (w, p) in whole.iter().zip(&partial) {
        assert_well_formed(p);
        assert!(!w.svg.contains("INCOMPLETE"), "{}", w.name);
        assert!(
            p.svg.contains("\nINCOMPLETE: 5 of 6 runs\n</text>"),
            "{} lacks the stamp",
            p.name
        );
        // the stamp is drawn into the pixels too, not only the SVG
        assert_ne!(w.png, p.png, "{}: PNG unchanged", p.name);
    }
}
