//! The Pareto front of a scenario's arms over cost, failure rate and
//! restarts, all lower-better, on the arms' means over seeds.

use serde::Serialize;

/// The objectives of the front, as metric keys; every one is lower-better.
pub const OBJECTIVES: [&str; 3] = ["cost_usd", "failure_rate", "restarts"];

/// One arm's means of the [`OBJECTIVES`], in that order; `None` where the
/// metric is undefined in every run of the arm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoPoint {
    pub arm: String,
    pub cost_usd: Option<f64>,
    pub failure_rate: Option<f64>,
    pub restarts: Option<f64>,
}

impl ParetoPoint {
    fn objectives(&self) -> Option<[f64; 3]> {
        match (self.cost_usd, self.failure_rate, self.restarts) {
            (Some(c), Some(f), Some(r)) if c.is_finite() && f.is_finite() && r.is_finite() => Some([c, f, r]),
            _ => None,
        }
    }
}

/// Where an arm stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ParetoStatus {
    /// no other arm dominates it
    OnFront,
    /// these arms (in input order) are at least as good on every objective
    /// and better on one
    Dominated { by: Vec<String> },
    /// an objective is undefined for the arm, so it is compared with none
    Undefined,
}

/// An arm's point and its status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoEntry {
    #[serde(flatten)]
    pub point: ParetoPoint,
    #[serde(flatten)]
    pub status: ParetoStatus,
}

impl ParetoEntry {
    pub fn on_front(&self) -> bool {
        self.status == ParetoStatus::OnFront
    }
}

/// Whether `a` dominates `b`: no worse on every objective, better on one.
pub fn dominates(a: &[f64; 3], b: &[f64; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y)
}

/// Every point with its status, in input order. Arms with equal objectives
/// do not dominate each other, so both can be on the front.
pub fn pareto_front(points: &[ParetoPoint]) -> Vec<ParetoEntry> {
    let objectives: Vec<Option<[f64; 3]>> = points.iter().map(ParetoPoint::objectives).collect();
    points
        .iter()
        .zip(&objectives)
        .map(|(point, own)| {
            let status = match own {
                None => ParetoStatus::Undefined,
                Some(own) => {
                    let by: Vec<String> = points
                        .iter()
                        .zip(&objectives)
                        .filter(|(_, other)| other.is_some_and(|o| dominates(&o, own)))
                        .map(|(p, _)| p.arm.clone())
                        .collect();
                    if by.is_empty() {
                        ParetoStatus::OnFront
                    } else {
                        ParetoStatus::Dominated { by }
                    }
                }
            };
            ParetoEntry {
                point: point.clone(),
                status,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(arm: &str, c: f64, f: f64, r: f64) -> ParetoPoint {
        ParetoPoint {
            arm: arm.into(),
            cost_usd: Some(c),
            failure_rate: Some(f),
            restarts: Some(r),
        }
    }

    #[test]
    fn front_and_dominators() {
        let points = [
            p("default", 10.0, 0.2, 5.0),
            p("binpack", 6.0, 0.3, 5.0),  // cheaper, fails more: on the front
            p("spread", 12.0, 0.25, 6.0), // worse than default everywhere
            p("worst", 13.0, 0.3, 6.0),   // dominated by all three others
            p("twin", 10.0, 0.2, 5.0),    // equal to default: both on the front
        ];
        let e = pareto_front(&points);
        let status: Vec<&ParetoStatus> = e.iter().map(|e| &e.status).collect();
        assert_eq!(status[0], &ParetoStatus::OnFront);
        assert_eq!(status[1], &ParetoStatus::OnFront);
        assert_eq!(
            status[2],
            &ParetoStatus::Dominated {
                by: vec!["default".into(), "twin".into()]
            }
        );
        assert_eq!(
            status[3],
            &ParetoStatus::Dominated {
                by: vec!["default".into(), "binpack".into(), "spread".into(), "twin".into()]
            }
        );
        assert!(e[4].on_front());
    }

    #[test]
    fn undefined_objective_is_not_compared() {
        let mut idle = p("idle", 0.0, 0.0, 0.0);
        idle.failure_rate = None;
        let e = pareto_front(&[idle, p("a", 1.0, 0.1, 1.0)]);
        assert_eq!(e[0].status, ParetoStatus::Undefined);
        assert!(e[1].on_front(), "an undefined arm dominates nothing");
        assert!(pareto_front(&[]).is_empty());
    }

    #[test]
    fn dominance_is_strict_somewhere() {
        assert!(dominates(&[1.0, 1.0, 1.0], &[1.0, 1.0, 2.0]));
        assert!(!dominates(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]));
        assert!(!dominates(&[0.0, 2.0, 1.0], &[1.0, 1.0, 1.0]));
    }

    #[test]
    fn serialises_flat() {
        let e = pareto_front(&[p("a", 1.0, 0.5, 2.0), p("b", 2.0, 0.5, 2.0)]);
        let j = serde_json::to_value(&e).unwrap();
        assert_eq!(j[0]["status"], "on_front");
        assert_eq!(j[1]["status"], "dominated");
        assert_eq!(j[1]["by"], serde_json::json!(["a"]));
        assert_eq!(j[1]["cost_usd"], 2.0);
    }
}
