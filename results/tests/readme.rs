//! The README defines every metric that reports print.

#[test]
fn readme_defines_every_metric() {
    let readme = include_str!("../../README.md");
    for def in results::definitions::METRICS
        .iter()
        .chain(results::definitions::CORRELATIONS)
    {
        assert!(
            readme.contains(&format!("**`{}`**", def.key)),
            "README.md lacks a definition of {}",
            def.key
        );
        assert!(
            readme.contains(def.definition),
            "README.md's definition of {} is out of date",
            def.key
        );
    }
}
