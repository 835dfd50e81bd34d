//! `schedlab cluster up|status|down --local`: a real control plane on
//! loopback (see `provisioning::local`), with real nodes beside it on
//! request (see `provisioning::kubelets`).

use crate::exit::InputError;
use crate::out::outln;
use anyhow::Context;
use clap::{Args, Subcommand};
use provisioning::local::{self, LocalOptions};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub action: ClusterAction,
}

#[derive(Debug, Subcommand)]
pub enum ClusterAction {
    /// Install what is missing, build Kubernetes once (cached), start the control plane and wait until ready.
    Up(UpArgs),
    /// Show which components run and whether the apiserver is ready.
    Status(StateArgs),
    /// Stop exactly the processes `up` started (by the pid files in the state folder).
    Down(StateArgs),
}

#[derive(Debug, Args)]
pub struct StateArgs {
    /// The local backend: etcd + kube-apiserver + kube-scheduler on 127.0.0.1 (the only one for now).
    #[arg(long)]
    pub local: bool,
    /// The state folder (PKI, kubeconfigs, logs, pid files). Default: $SCHEDLAB_CACHE/local or ~/.cache/schedlab/k8s/local.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// Also run kube-controller-manager (node-lifecycle included; nodes must then renew their Leases).
    #[arg(long)]
    pub controller_manager: bool,
    /// The default scheduler's client QPS; give every compared scheduler the same.
    #[arg(long, default_value_t = local::DEFAULT_CLIENT_QPS)]
    pub scheduler_qps: f32,
    /// The default scheduler's client burst.
    #[arg(long, default_value_t = local::DEFAULT_CLIENT_BURST)]
    pub scheduler_burst: u32,
    /// Do not install missing Debian packages (apt-get needs root).
    #[arg(long)]
    pub no_install: bool,
    /// Also start N real nodes on this machine (a kubelet with containerd each, in its own
    /// mount namespace and cgroups; needs root and cgroup v1; runs the controller-manager).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub real_nodes: usize,
    /// Make the real nodes look like the first N nodes of this scenario (built-in name or YAML
    /// path): their labels, pool label and price, taints, pod limit, and reservations that
    /// bring allocatable down to theirs.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Override a parameter of --scenario, e.g. `--set nodes=4` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// Let --scenario's `replay` read this trace file, though it is not inside the scenario file's folder
    /// (an absolute path, or one through `..`); repeatable.
    #[arg(long = "allow-trace", value_name = "PATH")]
    pub allow_trace: Vec<PathBuf>,
}

pub fn run(args: ClusterArgs) -> anyhow::Result<()> {
    match args.action {
        ClusterAction::Up(up) => run_up(up),
        ClusterAction::Status(state) => run_status(state),
        ClusterAction::Down(state) => run_down(state),
    }
}

fn state_dir(args: &StateArgs) -> anyhow::Result<PathBuf> {
    if !args.local {
        return Err(InputError("say which cluster: only --local is supported".into()).into());
    }
    let dir = match &args.state {
        Some(dir) => dir.clone(),
        None => local::default_state_dir()?,
    };
    // a file or a device (`--state /dev/null`, or a folder under one) is bad
    // input, not a failure to read the pid files under it
    if let Some(found) = dir.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists())
        && !found.is_dir()
    {
        let under = if found == dir {
            String::new()
        } else {
            format!(" ({} is not a folder)", found.display())
        };
        return Err(InputError(format!("--state {}: not a folder{under}", dir.display())).into());
    }
    Ok(dir)
}

fn run_up(args: UpArgs) -> anyhow::Result<()> {
    let state_dir = state_dir(&args.state)?;
    if !(args.scheduler_qps > 0.0 && args.scheduler_burst > 0) {
        return Err(InputError("--scheduler-qps and --scheduler-burst must be positive".into()).into());
    }
    let mut opts = LocalOptions::from_env()?;
    opts.state_dir = state_dir;
    opts.controller_manager = args.controller_manager;
    opts.scheduler_qps = args.scheduler_qps;
    opts.scheduler_burst = args.scheduler_burst;
    opts.install_packages = !args.no_install;
    opts.real_nodes = args.real_nodes;
    let played = scenario_nodes(&args)?;
    if let Some(specs) = &played {
        opts.real_node_tuning = provisioning::kubelets::scenario::tunings(specs)?;
    }
    if args.real_nodes > 0 {
        // the workload and scheduler images hold the programs built beside this one
        let exe = std::env::current_exe().context("finding the schedlab program")?;
        let dir = exe.parent().unwrap_or(std::path::Path::new("."));
        opts.pod_programs = Some(provisioning::kubelets::PodPrograms::beside(dir)?);
    }
    opts.cancel = Some(local::cancel_on_interrupt()?);
    crate::out::noteln!("bringing the local control plane up (a cold cache builds Kubernetes: several minutes)");
    let cluster = local::up(&opts).context("local control plane")?;
    let t = &cluster.timings;
    crate::out::noteln!(
        "ready in {:.1}s (packages {:.1}s, source {:.1}s, build {:.1}s, start {:.1}s, real nodes {:.1}s)",
        t.total.as_secs_f64(),
        t.packages.as_secs_f64(),
        t.source.as_secs_f64(),
        t.build.as_secs_f64(),
        t.start.as_secs_f64(),
        t.nodes.as_secs_f64()
    );
    for (name, pid) in cluster.pids() {
        outln!("{name}\tpid {pid}")?;
    }
    if let Some(specs) = &played
        && let Err(err) = label_like(&cluster, specs)
    {
        // an error stops what was started
        let _ = cluster.down();
        return Err(err.context("giving the real nodes their scenario nodes' labels"));
    }
    for (i, node) in cluster.record.real_nodes.iter().enumerate() {
        let plays = played
            .as_ref()
            .and_then(|specs| specs.get(i))
            .map(|spec| format!("\tplays {} (pool {})", spec.name, spec.pool.name))
            .unwrap_or_default();
        outln!(
            "real node {}\tReady after {:.1}s{plays}",
            node.name,
            node.ready_after.as_secs_f64()
        )?;
    }
    let (qps, burst) = cluster.client_rate();
    outln!("server\t{}", cluster.server())?;
    outln!("scheduler client rate\tqps {qps} burst {burst}")?;
    outln!("agmarl kubeconfig\t{}", cluster.agmarl_kubeconfig().display())?;
    outln!("export KUBECONFIG={}", cluster.admin_kubeconfig().display())?;
    Ok(())
}

/// The scenario nodes the real nodes play (`--scenario`): its first `--real-nodes`.
fn scenario_nodes(args: &UpArgs) -> anyhow::Result<Option<Vec<schedlab_core::NodeSpec>>> {
    let Some(name) = &args.scenario else {
        if !args.set.is_empty() {
            return Err(InputError("--set is for --scenario".into()).into());
        }
        if !args.allow_trace.is_empty() {
            return Err(InputError("--allow-trace is for --scenario".into()).into());
        }
        return Ok(None);
    };
    if args.real_nodes == 0 {
        return Err(InputError(
            "--scenario is for --real-nodes N: it makes the real nodes look like the scenario's".into(),
        )
        .into());
    }
    let scenario = workloads::load_allowing(name, &args.set, &args.allow_trace)?;
    // a scenario's nodes do not depend on the seed
    let nodes = scenario.expand(1).nodes;
    if nodes.len() < args.real_nodes {
        return Err(InputError(format!(
            "--real-nodes {}: scenario {name} has {} nodes (give --set nodes=N to change that)",
            args.real_nodes,
            nodes.len()
        ))
        .into());
    }
    Ok(Some(nodes.into_iter().take(args.real_nodes).collect()))
}

/// Labels, pool label and price of the scenario nodes on the real nodes.
fn label_like(cluster: &local::LocalCluster, specs: &[schedlab_core::NodeSpec]) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let admin = kube_backend::ApiClient::connect(&kube_backend::ClientOptions {
            kubeconfig: Some(cluster.admin_kubeconfig().to_path_buf()),
            ..Default::default()
        })
        .await?;
        provisioning::kubelets::scenario::label_like(&admin, specs).await?;
        anyhow::Ok(())
    })
}

fn run_status(args: StateArgs) -> anyhow::Result<()> {
    let state_dir = state_dir(&args)?;
    let st = local::status(&state_dir)?;
    for c in &st.components {
        let what = match (c.pid, c.running) {
            (None, _) => "not started".to_owned(),
            (Some(pid), true) => format!("running (pid {pid})"),
            (Some(pid), false) => format!("exited (pid {pid} recorded)"),
        };
        outln!("{}\t{what}", c.name)?;
    }
    match &st.record {
        Some(r) => outln!(
            "apiserver\t{} {}",
            r.server,
            if st.apiserver_ready { "ready" } else { "NOT ready" }
        )?,
        None => outln!("apiserver\tno control plane recorded in {}", state_dir.display())?,
    }
    for node in &st.real_nodes {
        let ready = match node.ready {
            Some(true) => "Ready",
            Some(false) => "NOT Ready",
            None => "readiness unknown",
        };
        let run = |on: bool| if on { "running" } else { "stopped" };
        outln!(
            "real node {}\t{ready}, kubelet {}, containerd {}",
            node.name,
            run(node.kubelet),
            run(node.containerd)
        )?;
    }
    if st.record.is_some() && !st.healthy() {
        anyhow::bail!("the local control plane in {} is not healthy", state_dir.display());
    }
    Ok(())
}

fn run_down(args: StateArgs) -> anyhow::Result<()> {
    let state_dir = state_dir(&args)?;
    let stopped = local::down(&state_dir)?;
    if stopped.is_empty() {
        outln!("nothing recorded in {}", state_dir.display())?;
    }
    for (name, how) in stopped {
        match how {
            local::Stopped::NotOurs { pid } => {
                outln!("{name}\tNotOurs: pid {pid} runs a process this state folder did not start; left running")?
            }
            how => outln!("{name}\t{how:?}")?,
        }
    }
    Ok(())
}
