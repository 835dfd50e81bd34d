//! The verdict of a claim against one baseline, from the outcome of each of
//! its rows.

use super::mapping::Role;
use serde::Serialize;

/// The rule, word for word as the reports and the README print it.
pub const VERDICT_RULE: &str = "Per claim and per baseline arm, over every row of the claim (each metric of the \
                                claim on each scenario of the claim): `supported` when the judged arm is \
                                significantly better (Holm-adjusted Mann–Whitney p < 0.05, its direction that of \
                                Cliff's delta, better as the metric's definition says, or as the claim says where \
                                the definition names no direction) on every primary row and significantly worse on \
                                no row, primary or guard; `contradicted` when it is significantly worse on at least \
                                one primary row and significantly better on no row; `not shown` otherwise, and \
                                always when a row is undefined: its scenario has no run folder, the judged arm or \
                                the baseline is missing from it, or no run of one side defines the metric. The \
                                claim's verdict is the one against `default`, the paper's comparison; the other \
                                baselines' verdicts are shown beside it.";

/// What one row says against one baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// significantly better
    Better,
    /// significantly worse
    Worse,
    /// no significant difference
    NoDifference,
    /// the row could not be tested
    Undefined,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Better => "better",
            Outcome::Worse => "worse",
            Outcome::NoDifference => "no significant difference",
            Outcome::Undefined => "undefined",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Supported,
    NotShown,
    Contradicted,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::NotShown => "not shown",
            Verdict::Contradicted => "contradicted",
        }
    }
}

/// [`VERDICT_RULE`] over the rows' roles and outcomes. No rows: not shown.
pub fn verdict(rows: &[(Role, Outcome)]) -> Verdict {
    let any = |role: Option<Role>, outcome: Outcome| {
        rows.iter()
            .any(|&(r, o)| o == outcome && role.is_none_or(|role| role == r))
    };
    let primaries = rows.iter().filter(|(r, _)| *r == Role::Primary);
    if rows.is_empty() || any(None, Outcome::Undefined) {
        return Verdict::NotShown;
    }
    let all_primary_better = primaries.clone().count() > 0 && primaries.clone().all(|(_, o)| *o == Outcome::Better);
    if all_primary_better && !any(None, Outcome::Worse) {
        Verdict::Supported
    } else if any(Some(Role::Primary), Outcome::Worse) && !any(None, Outcome::Better) {
        Verdict::Contradicted
    } else {
        Verdict::NotShown
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;
    use super::Role::*;
    use super::*;

    #[test]
    fn the_rule_case_by_case() {
        assert_eq!(
            verdict(&[(Primary, Better), (Primary, Better), (Guard, NoDifference)]),
            Verdict::Supported
        );
        assert_eq!(verdict(&[(Primary, Better), (Guard, Better)]), Verdict::Supported);
        // one primary row not significant
        assert_eq!(
            verdict(&[(Primary, Better), (Primary, NoDifference)]),
            Verdict::NotShown
        );
        // better on every primary row, but bought with a worse guard
        assert_eq!(verdict(&[(Primary, Better), (Guard, Worse)]), Verdict::NotShown);
        // a worse guard alone contradicts nothing
        assert_eq!(verdict(&[(Primary, NoDifference), (Guard, Worse)]), Verdict::NotShown);
        assert_eq!(
            verdict(&[(Primary, Worse), (Primary, NoDifference)]),
            Verdict::Contradicted
        );
        assert_eq!(verdict(&[(Primary, Worse), (Guard, Worse)]), Verdict::Contradicted);
        // worse on one primary row, better on another: mixed
        assert_eq!(verdict(&[(Primary, Worse), (Primary, Better)]), Verdict::NotShown);
        // better on a guard row: not contradicted either
        assert_eq!(verdict(&[(Primary, Worse), (Guard, Better)]), Verdict::NotShown);
        // an undefined row (missing scenario, arm or data) leaves it not shown, whatever else
        assert_eq!(verdict(&[(Primary, Better), (Primary, Undefined)]), Verdict::NotShown);
        assert_eq!(verdict(&[(Primary, Better), (Guard, Undefined)]), Verdict::NotShown);
        assert_eq!(verdict(&[(Primary, Worse), (Primary, Undefined)]), Verdict::NotShown);
        assert_eq!(verdict(&[]), Verdict::NotShown);
        assert_eq!(verdict(&[(Guard, Better)]), Verdict::NotShown);
    }
}
