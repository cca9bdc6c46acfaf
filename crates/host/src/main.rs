//! `countersign-host`: serve the organization's negotiation host, or administer
//! its database. Exit codes: 0 success, 1 the operation failed, 2 bad usage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use countersign_host::config::DiscoveryMode;
use countersign_host::{
    admin, store, Connections, Durability, Host, HostConfig, Limit, Limits, Target,
};
use serde_json::json;

/// mimalloc: each request allocates and frees many small buffers (headers,
/// JSON, SQL rows) on the runtime's threads; glibc's malloc was a tenth of
/// the host's CPU under load (crates/anp-loadgen/README.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The organization's negotiation host (ANP/0.1 endpoints, the gate, the
/// approver API) and its admin commands.
#[derive(Parser)]
#[command(name = "countersign-host", version)]
struct Cli {
    /// The SQLite database file (created on first use), or a PostgreSQL
    /// database as postgres://USER@HOST:PORT/DB. Default: $COUNTERSIGN_HOST_DB.
    #[arg(long, global = true, value_name = "FILE|URL")]
    db: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the agent API, discovery, the gate and the approver API.
    Serve(ServeArgs),
    /// Buyer organizations.
    #[command(subcommand)]
    Org(OrgCommand),
    /// Agents: registered vendor agents, and the org's own gate agents.
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Approvers (the people who decide in the console).
    #[command(subcommand)]
    Approver(ApproverCommand),
    /// Buyer policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The policy of authority: who approves what, in which order (docs/authority.md).
    #[command(subcommand)]
    Authority(AuthorityCommand),
    /// ANEX over A2A: each org's policy and data set, counterparty agents and their tokens.
    #[command(subcommand)]
    Anex(AnexCommand),
}

#[derive(Subcommand)]
enum AnexCommand {
    /// Load an org's ANEX policy file (JSON, docs/anex-binding.md "The owner's policy").
    Policy {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// The policy file.
        file: PathBuf,
    },
    /// Load an org's ANEX data set (JSON: item name to value, at most 1 MiB).
    Data {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// The data file.
        file: PathBuf,
    },
    /// Counterparty agents that may ask an org for data.
    #[command(subcommand)]
    Counterparty(CounterpartyCommand),
}

#[derive(Subcommand)]
enum CounterpartyCommand {
    /// Register a counterparty agent for an org; prints its bearer token once.
    Add {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// Its ANEX agent identity (every message's sender), e.g. did:web:supplier.example.
        #[arg(long)]
        identity: String,
        /// Its display name.
        #[arg(long)]
        name: String,
        /// The relation the policy's `relations` match (e.g. supplier).
        #[arg(long)]
        relation: Option<String>,
    },
    /// Every counterparty (never their tokens).
    List,
    /// Revoke a counterparty's token.
    Revoke {
        /// The counterparty id (anexcp_…).
        counterparty_id: String,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on, for example 127.0.0.1:8480.
    #[arg(long, default_value = "127.0.0.1:8480")]
    listen: String,
    /// SQLite synchronous mode: full (an acknowledged event survives power loss) or normal (process crashes only).
    #[arg(long, default_value = "full", value_parser = ["full", "normal"])]
    sync: String,
    /// Requests per minute per client IP.
    #[arg(long, default_value_t = 6000)]
    limit_ip: u32,
    /// Signed requests per minute per agent or approver.
    #[arg(long, default_value_t = 3000)]
    limit_agent: u32,
    /// Event submissions per minute per session.
    #[arg(long, default_value_t = 1200)]
    limit_session: u32,
    /// Registrations and enrollments per minute per client IP.
    #[arg(long, default_value_t = 20)]
    limit_registration: u32,
    /// Largest request body in bytes (agent and approver APIs).
    #[arg(long, default_value_t = 512 * 1024)]
    max_body_bytes: usize,
    /// Largest request body the gate accepts, in bytes (a whole transcript).
    #[arg(long, default_value_t = 1024 * 1024)]
    gate_max_body_bytes: usize,
    /// What /.well-known/anp.json serves: none (404, a plain ANP/0.1 host),
    /// rfc003 (exactly RFC-003's members) or full (plus drafts and approved_by).
    #[arg(long, default_value = "full", value_parser = ["none", "rfc003", "full"])]
    discovery: String,
    /// The platform key file (default with SQLite: beside the database;
    /// required with PostgreSQL, the same file for every process).
    /// Default: $COUNTERSIGN_HOST_PLATFORM_KEY.
    #[arg(long, value_name = "FILE")]
    platform_key: Option<PathBuf>,
    /// A load balancer's address whose X-Forwarded-For names the client for
    /// the per-IP limits (repeat for several; behind nginx, nginx's address).
    #[arg(long = "trusted-proxy", value_name = "IP")]
    trusted_proxies: Vec<std::net::IpAddr>,
    /// The origin counterparties reach this host at, e.g.
    /// https://negotiate.example.com: what the A2A Agent Cards and each
    /// org's ANEX identity name (the terms owners sign bind it). Without it
    /// they name the listening address, which is right on loopback only:
    /// do not expose the host without it.
    /// Default: $COUNTERSIGN_HOST_PUBLIC_URL.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Seconds a client has to send a request's headers (also how long an
    /// idle kept-alive connection stays open); then the connection is closed.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout_secs: u64,
    /// Seconds a client has to send a request's body after its headers;
    /// then it is refused with 408 and nothing is stored.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout_secs: u64,
    /// Most connections this process holds open at once (and at most 3/4 of
    /// its open-file limit, which it raises to the hard limit); at the cap a
    /// new one takes the place of the one that has waited longest for a
    /// request, or else of the console's waiting request held longest.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// PostgreSQL only: connections this process keeps to the database.
    /// Commits waiting for their flush together share it; several processes
    /// on one database want about 24 in all (8 each for three).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=256))]
    db_connections: u64,
    /// A network whose addresses gate agents may name as callbacks although
    /// they are not public, e.g. 10.0.0.0/8 or 127.0.0.1/32 for an agent on
    /// this machine (repeat for several; default: public addresses only).
    #[arg(long = "allow-callback-network", value_name = "CIDR", value_parser = countersign_host::callback::Network::parse)]
    callback_networks: Vec<countersign_host::callback::Network>,
    /// Whether approvers and gate agents may still sign with version 1 (ANP/0.1's
    /// request string, which covers neither query, caller nor host) and enroll with
    /// the version 1 proof: true during the transition (each use is logged), false
    /// to refuse them. See docs/approver-api.md, "Signed requests".
    #[arg(long, value_name = "true|false", default_value_t = true, action = clap::ArgAction::Set)]
    accept_v1_signatures: bool,
    /// Whether consoles may wait for a change (`GET /summary?wait=`, held up to
    /// 90 s): false where a proxy in front cannot hold a request that long; the
    /// consoles then poll on their timer. See docs/approver-api.md.
    #[arg(long, value_name = "true|false", default_value_t = true, action = clap::ArgAction::Set)]
    wait_for_changes: bool,
}

#[derive(Subcommand)]
enum OrgCommand {
    /// Create an org; prints its unguessable handle.
    Create {
        /// The buyer's name (its envelope's party).
        #[arg(long)]
        name: String,
    },
    /// Disable an org: sessions to it are refused.
    Disable {
        /// The org handle.
        handle: String,
    },
    /// List orgs.
    List,
}

#[derive(Subcommand)]
enum AgentCommand {
    /// Issue a one-time code that enrolls one of the org's own agents at
    /// the gate, for one protocol.
    Enroll {
        /// The org handle (`sandbox` for the sandbox).
        #[arg(long)]
        org: String,
        /// The agent's name, shown to approvers.
        #[arg(long)]
        name: String,
        /// The protocol it speaks: concordia or oanp (a transcript it
        /// mirrors), or plain (terms it asks about).
        #[arg(long)]
        protocol: String,
        /// The email of the approver who owns the agent: never the only
        /// approval of its requests (docs/authority.md).
        #[arg(long)]
        owner: Option<String>,
        /// Hours the code stays valid.
        #[arg(long, default_value_t = 24)]
        valid_hours: u64,
    },
    /// List vendor agents and gate agents.
    List,
    /// Mark a vendor agent verified by a person: it may open live sessions,
    /// and the names it now carries are shown to approvers as verified.
    Verify {
        /// The agent id.
        agent_id: String,
    },
    /// Every registration of a vendor agent's key with the names each
    /// declared (read it before `verify`: a registration's proof is
    /// replayable, so its names are only the sender's claim).
    History {
        /// The agent id.
        agent_id: String,
    },
    /// Revoke an agent (vendor or gate) everywhere.
    Revoke {
        /// The agent id.
        agent_id: String,
    },
    /// Issue a gate agent a bearer token for the host's MCP endpoint
    /// (docs/mcp.md); the token is shown once.
    McpToken {
        /// The gate agent id (`gate_…`).
        agent_id: String,
    },
    /// Enroll an agent that asks about plain terms over MCP only (no key),
    /// and issue its token (shown once).
    McpAgent {
        /// The org handle (`sandbox` for the sandbox).
        #[arg(long)]
        org: String,
        /// The agent's name, shown to approvers.
        #[arg(long)]
        name: String,
        /// The email of the approver who owns the agent (never the only
        /// approval of its requests).
        #[arg(long)]
        owner: Option<String>,
    },
    /// List MCP tokens (never the tokens themselves).
    McpTokens,
    /// Revoke an MCP token: refused from now on.
    McpRevoke {
        /// The token id (`mcptok_…`).
        token_id: String,
    },
}

#[derive(Subcommand)]
enum ApproverCommand {
    /// Issue a one-time enrollment code for an approver.
    Enroll {
        /// The org handle (`sandbox` for the sandbox).
        #[arg(long)]
        org: String,
        /// The approver's name.
        #[arg(long)]
        name: String,
        /// The approver's email (signed into approvals as approved_by).
        #[arg(long)]
        email: String,
        /// Hours the code stays valid.
        #[arg(long, default_value_t = 24)]
        valid_hours: u64,
    },
    /// List approvers.
    List,
    /// Revoke an approver.
    Revoke {
        /// The approver id.
        approver_id: String,
    },
}

#[derive(Subcommand)]
enum AuthorityCommand {
    /// Load a policy of authority file (TOML) as the org's next version;
    /// requests already asked keep the version they were routed under.
    Load {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// Who loads it, kept with the version (default: $USER).
        #[arg(long)]
        by: Option<String>,
        /// The policy file.
        file: PathBuf,
    },
    /// Show the org's current policy of authority (or an earlier version).
    Show {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// The version to show (default: the current one).
        #[arg(long)]
        version: Option<u64>,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Load a policy file (JSON) for an org.
    Load {
        /// The org handle.
        #[arg(long)]
        org: String,
        /// The policy file.
        file: PathBuf,
    },
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let Some(db) = cli
        .db
        .clone()
        .or_else(|| std::env::var("COUNTERSIGN_HOST_DB").ok())
        .filter(|db| !db.is_empty())
    else {
        eprintln!("countersign-host: --db FILE|URL (or COUNTERSIGN_HOST_DB) is required");
        return ExitCode::from(2);
    };
    let mut cli = cli;
    if let Command::Serve(args) = &mut cli.command {
        match public_url(args.public_url.take()) {
            Ok(origin) => args.public_url = origin,
            Err(message) => {
                eprintln!("countersign-host: {message}");
                return ExitCode::from(2);
            }
        }
    }
    match run(cli, Target::parse(&db)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("countersign-host: {message}");
            ExitCode::from(1)
        }
    }
}

/// `--public-url` or `$COUNTERSIGN_HOST_PUBLIC_URL`, read as an origin.
fn public_url(flag: Option<String>) -> Result<Option<String>, String> {
    let (text, from) = match flag {
        Some(text) => (text, "--public-url"),
        None => match std::env::var("COUNTERSIGN_HOST_PUBLIC_URL") {
            Ok(text) if !text.is_empty() => (text, "COUNTERSIGN_HOST_PUBLIC_URL"),
            _ => return Ok(None),
        },
    };
    countersign_host::config::public_origin(&text)
        .map(Some)
        .map_err(|e| format!("{from}: {e}"))
}

fn print(as_json: bool, value: serde_json::Value, text: String) {
    if as_json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}

fn run(cli: Cli, target: Target) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    if let Command::Serve(args) = cli.command {
        return serve(&runtime, target, args);
    }
    runtime.block_on(admin_command(cli, target))
}

async fn admin_command(cli: Cli, target: Target) -> Result<(), String> {
    let as_json = cli.json;
    let opened = store::open(&target, Durability::default())
        .await
        .map_err(|e| e.to_string())?;
    let conn = opened.as_ref();
    let now = time::OffsetDateTime::now_utc();
    let err = |e: admin::AdminError| e.to_string();
    match cli.command {
        Command::Serve(_) => unreachable!("handled above"),
        Command::Org(OrgCommand::Create { name }) => {
            let org = admin::create_org(conn, &name, now).await.map_err(err)?;
            print(as_json, json!(org), org.org_handle.clone());
        }
        Command::Org(OrgCommand::Disable { handle }) => {
            admin::disable_org(conn, &handle).await.map_err(err)?;
            print(
                as_json,
                json!({ "org_handle": handle, "disabled": true }),
                format!("disabled {handle}"),
            );
        }
        Command::Org(OrgCommand::List) => {
            let orgs = admin::list_orgs(conn).await.map_err(err)?;
            let text = orgs
                .iter()
                .map(|o| {
                    format!(
                        "{}\t{}\t{}",
                        o.org_handle,
                        if o.disabled { "disabled" } else { "active" },
                        o.name
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(as_json, json!({ "orgs": orgs }), text);
        }
        Command::Agent(AgentCommand::Enroll {
            org,
            name,
            protocol,
            owner,
            valid_hours,
        }) => {
            let ttl = Duration::from_secs(valid_hours.saturating_mul(3600));
            let code =
                admin::gate_enroll_code(conn, &org, &name, &protocol, owner.as_deref(), ttl, now)
                    .await
                    .map_err(err)?;
            let text = format!(
                "{}\n(one-time code for a {} gate agent of {org}, expires {})",
                code.code, code.protocol, code.expires_at
            );
            print(as_json, json!(code), text);
        }
        Command::Agent(AgentCommand::List) => {
            let agents = admin::list_agents(conn).await.map_err(err)?;
            let gate_agents = admin::list_gate_agents(conn).await.map_err(err)?;
            let vendors = agents.iter().map(|a| {
                format!(
                    "{}\t{}\t{}\t{}\t{}",
                    a.agent_id,
                    admin::status_text(a.status),
                    if a.names_verified {
                        "names verified"
                    } else {
                        "names unverified"
                    },
                    a.vendor_name,
                    a.agent_name
                )
            });
            let gate = gate_agents.iter().map(|a| {
                format!(
                    "{}\t{}\t{} gate agent of {}\t{}",
                    a.agent_id,
                    if a.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    },
                    a.protocol,
                    a.org_handle,
                    a.name
                )
            });
            let text = vendors.chain(gate).collect::<Vec<_>>().join("\n");
            print(
                as_json,
                json!({ "agents": agents, "gate_agents": gate_agents }),
                text,
            );
        }
        Command::Agent(AgentCommand::Verify { agent_id }) => {
            admin::verify_agent(conn, &agent_id).await.map_err(err)?;
            print(
                as_json,
                json!({ "agent_id": agent_id, "status": "verified" }),
                format!("verified {agent_id}"),
            );
        }
        Command::Agent(AgentCommand::History { agent_id }) => {
            let history = admin::agent_registrations(conn, &agent_id)
                .await
                .map_err(err)?;
            let lines: Vec<String> = history
                .iter()
                .map(|r| {
                    format!(
                        "{}\t{}\t{}\t{}\t{}",
                        r.ordinal, r.registered_at, r.vendor_name, r.agent_name, r.contact_email
                    )
                })
                .collect();
            print(
                as_json,
                json!({ "agent_id": agent_id, "registrations": history }),
                lines.join("\n"),
            );
        }
        Command::Agent(AgentCommand::Revoke { agent_id }) => {
            admin::revoke_agent(conn, &agent_id).await.map_err(err)?;
            print(
                as_json,
                json!({ "agent_id": agent_id, "status": "revoked" }),
                format!("revoked {agent_id}"),
            );
        }
        Command::Agent(AgentCommand::McpToken { agent_id }) => {
            let issued = countersign_host::mcp_admin::issue_token(conn, &agent_id, now)
                .await
                .map_err(err)?;
            let text = format!(
                "issued {} for {agent_id}\ntoken (shown once): {}\nendpoint: {}",
                issued.info.token_id, issued.token, issued.endpoint_path
            );
            print(
                as_json,
                serde_json::to_value(&issued).map_err(|e| e.to_string())?,
                text,
            );
        }
        Command::Agent(AgentCommand::McpAgent { org, name, owner }) => {
            let enrolled = countersign_host::mcp_admin::enroll_mcp_agent(
                conn,
                &org,
                &name,
                owner.as_deref(),
                now,
            )
            .await
            .map_err(err)?;
            let text = format!(
                "enrolled {} for {org} (plain terms over MCP)\ntoken (shown once): {}\nendpoint: {}",
                enrolled.agent_id, enrolled.credential.token, enrolled.credential.endpoint_path
            );
            print(
                as_json,
                serde_json::to_value(&enrolled).map_err(|e| e.to_string())?,
                text,
            );
        }
        Command::Agent(AgentCommand::McpTokens) => {
            let all = countersign_host::mcp_admin::list_tokens(conn)
                .await
                .map_err(err)?;
            let text = all
                .iter()
                .map(|t| {
                    format!(
                        "{}  {}  {}{}",
                        t.token_id,
                        t.agent_id,
                        t.created_at,
                        if t.revoked_at.is_some() {
                            "  (revoked)"
                        } else {
                            ""
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(
                as_json,
                json!({ "tokens": all }),
                if text.is_empty() {
                    "no MCP tokens".into()
                } else {
                    text
                },
            );
        }
        Command::Agent(AgentCommand::McpRevoke { token_id }) => {
            countersign_host::mcp_admin::revoke_token(conn, &token_id, now)
                .await
                .map_err(err)?;
            print(
                as_json,
                json!({ "token_id": token_id, "revoked": true }),
                format!("revoked {token_id}"),
            );
        }
        Command::Approver(ApproverCommand::Enroll {
            org,
            name,
            email,
            valid_hours,
        }) => {
            let ttl = Duration::from_secs(valid_hours.saturating_mul(3600));
            let code = admin::enroll_code(conn, &org, &name, &email, ttl, now)
                .await
                .map_err(err)?;
            let text = format!(
                "{}\n(one-time code for {email}, expires {})",
                code.code, code.expires_at
            );
            print(as_json, json!(code), text);
        }
        Command::Approver(ApproverCommand::List) => {
            let approvers = admin::list_approvers(conn).await.map_err(err)?;
            let text = approvers
                .iter()
                .map(|a| {
                    format!(
                        "{}\t{}\t{}\t{}",
                        a.approver_id,
                        a.org_handle,
                        a.email,
                        match (&a.revoked_at, &a.retired_at) {
                            (Some(_), _) => "revoked".to_owned(),
                            (None, Some(at)) => format!("retired {at} (moved to a new key)"),
                            (None, None) => "active".to_owned(),
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(as_json, json!({ "approvers": approvers }), text);
        }
        Command::Approver(ApproverCommand::Revoke { approver_id }) => {
            admin::revoke_approver(conn, &approver_id, now)
                .await
                .map_err(err)?;
            print(
                as_json,
                json!({ "approver_id": approver_id, "revoked": true }),
                format!("revoked {approver_id}"),
            );
        }
        Command::Policy(PolicyCommand::Load { org, file }) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read policy file {}: {e}", file.display()))?;
            let policy = admin::load_policy(conn, &org, &text).await.map_err(err)?;
            print(
                as_json,
                json!({ "org_handle": org, "loaded": true, "skus": policy.skus.keys().collect::<Vec<_>>() }),
                format!("loaded policy for {org}"),
            );
        }
        Command::Authority(command) => authority_command(conn, as_json, command, now).await?,
        Command::Anex(command) => anex_command(conn, as_json, command, now).await?,
    }
    Ok(())
}

async fn authority_command(
    conn: &dyn store::Storage,
    as_json: bool,
    command: AuthorityCommand,
    now: time::OffsetDateTime,
) -> Result<(), String> {
    use countersign_host::authority_admin::{self, AuthorityInfo, Shown};
    let err = |e: admin::AdminError| e.to_string();
    let describe = |info: &AuthorityInfo| {
        let mut lines = vec![format!(
            "{} policy of authority version {} (loaded by {} at {})",
            info.org_handle, info.version, info.loaded_by, info.loaded_at
        )];
        for (role, people) in &info.roles {
            lines.push(format!("role {role}: {}", people.join(", ")));
        }
        for rule in &info.rules {
            lines.push(format!(
                "rule {}: {}: {}",
                rule.number,
                rule.name,
                rule.chain.join(", then ")
            ));
        }
        if !info.not_enrolled.is_empty() {
            lines.push(format!(
                "warning: not enrolled for this org yet (cannot act until they are): {}",
                info.not_enrolled.join(", ")
            ));
        }
        lines.join("\n")
    };
    match command {
        AuthorityCommand::Load { org, by, file } => {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                format!(
                    "cannot read policy of authority file {}: {e}",
                    file.display()
                )
            })?;
            let by = by
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "admin".into());
            let info = authority_admin::load(conn, &org, &text, &by, now)
                .await
                .map_err(|e| match e {
                    admin::AdminError::Authority(f) => format!(
                        "{}: policy of authority refused: line {}, {}: {}",
                        file.display(),
                        f.line,
                        f.field,
                        f.reason
                    ),
                    other => other.to_string(),
                })?;
            let text = format!("loaded {}", describe(&info));
            let mut value = json!(info);
            if let Some(v) = value.as_object_mut() {
                v.remove("text");
                v.insert("loaded".into(), true.into());
            }
            print(as_json, value, text);
        }
        AuthorityCommand::Show { org, version } => {
            match authority_admin::show(conn, &org, version)
                .await
                .map_err(err)?
            {
                Shown::Loaded(info) => {
                    let text = format!("{}\n\n{}", describe(&info), info.text.trim_end());
                    print(as_json, json!(info), text);
                }
                Shown::Legacy(legacy) => {
                    let text = format!(
                        "{} has no policy of authority: its buyer policy decides (up to {} one approver; above it {} distinct approvers; ANEX asks one)",
                        legacy.org_handle, legacy.above_total, legacy.approvers_required
                    );
                    print(
                        as_json,
                        json!({ "org_handle": legacy.org_handle, "version": null, "legacy": legacy }),
                        text,
                    );
                }
            }
        }
    }
    Ok(())
}

async fn anex_command(
    conn: &dyn store::Storage,
    as_json: bool,
    command: AnexCommand,
    now: time::OffsetDateTime,
) -> Result<(), String> {
    use countersign_host::anex_admin;
    let err = |e: admin::AdminError| e.to_string();
    let read = |file: &PathBuf, what: &str| {
        std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {what} file {}: {e}", file.display()))
    };
    match command {
        AnexCommand::Policy { org, file } => {
            let policy = anex_admin::load_policy(conn, &org, &read(&file, "ANEX policy")?)
                .await
                .map_err(err)?;
            print(
                as_json,
                json!({ "org_handle": org, "loaded": true, "rules": policy.rules.len(), "terms_valid_days": policy.terms_valid_days }),
                format!(
                    "loaded the ANEX policy for {org} ({} rules)",
                    policy.rules.len()
                ),
            );
        }
        AnexCommand::Data { org, file } => {
            let items = anex_admin::load_data(conn, &org, &read(&file, "ANEX data")?)
                .await
                .map_err(err)?;
            print(
                as_json,
                json!({ "org_handle": org, "loaded": true, "items": items }),
                format!("loaded the ANEX data set for {org}: {}", items.join(", ")),
            );
        }
        AnexCommand::Counterparty(CounterpartyCommand::Add {
            org,
            identity,
            name,
            relation,
        }) => {
            let issued = anex_admin::add_counterparty(
                conn,
                &org,
                &identity,
                &name,
                relation.as_deref(),
                now,
            )
            .await
            .map_err(err)?;
            let text = format!(
                "registered {} ({}) for {org}\ntoken (shown once): {}\nendpoint: {}",
                issued.counterparty.counterparty_id,
                issued.counterparty.identity,
                issued.token,
                issued.endpoint_path
            );
            print(
                as_json,
                serde_json::to_value(&issued).map_err(|e| e.to_string())?,
                text,
            );
        }
        AnexCommand::Counterparty(CounterpartyCommand::List) => {
            let all = anex_admin::list_counterparties(conn).await.map_err(err)?;
            let text = all
                .iter()
                .map(|c| {
                    format!(
                        "{}  {}  {}  {}{}",
                        c.counterparty_id,
                        c.org_handle,
                        c.identity,
                        c.name,
                        if c.revoked_at.is_some() {
                            "  (revoked)"
                        } else {
                            ""
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(
                as_json,
                json!({ "counterparties": all }),
                if text.is_empty() {
                    "no ANEX counterparties".into()
                } else {
                    text
                },
            );
        }
        AnexCommand::Counterparty(CounterpartyCommand::Revoke { counterparty_id }) => {
            anex_admin::revoke_counterparty(conn, &counterparty_id, now)
                .await
                .map_err(err)?;
            print(
                as_json,
                json!({ "counterparty_id": counterparty_id, "revoked": true }),
                format!("revoked {counterparty_id}"),
            );
        }
    }
    Ok(())
}

fn serve(runtime: &tokio::runtime::Runtime, target: Target, args: ServeArgs) -> Result<(), String> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // The server's NOTICEs ("relation ... already exists,
                // skipping" on every start) are not news.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tokio_postgres=warn")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal, not in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let platform_key_path = args.platform_key.clone().or_else(|| {
        std::env::var_os("COUNTERSIGN_HOST_PLATFORM_KEY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let config = HostConfig {
        limits: Limits {
            per_ip: Limit::per_minute(args.limit_ip),
            per_agent: Limit::per_minute(args.limit_agent),
            per_session: Limit::per_minute(args.limit_session),
            registration: Limit::per_minute(args.limit_registration),
            max_body_bytes: args.max_body_bytes,
            gate_max_body_bytes: args.gate_max_body_bytes,
            ..Limits::default()
        },
        durability: if args.sync == "full" {
            Durability::Full
        } else {
            Durability::Normal
        },
        discovery: DiscoveryMode::parse(&args.discovery)
            .ok_or_else(|| format!("unknown discovery mode {:?}", args.discovery))?,
        platform_key_path,
        trusted_proxies: args.trusted_proxies.clone(),
        public_url: args.public_url.clone(),
        connections: Connections {
            header_read_timeout: Duration::from_secs(args.header_timeout_secs),
            body_read_timeout: Duration::from_secs(args.body_timeout_secs),
            max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        },
        db_connections: usize::try_from(args.db_connections).unwrap_or(16),
        callback_networks: args.callback_networks.clone(),
        accept_v1_signatures: args.accept_v1_signatures,
        wait_for_changes: args.wait_for_changes,
        ..HostConfig::default()
    };
    runtime.block_on(async move {
        let host = Host::open(target, config)
            .await
            .map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // The first stdout line names the address, so a parent process can read it.
        println!("listening on http://{addr}");
        if args.public_url.is_none() && !addr.ip().is_loopback() {
            let what = if addr.ip().is_unspecified() {
                "ANEX over A2A is refused: the organizations' agents have no address to be named by".to_owned()
            } else {
                format!("the A2A Agent Cards and the organizations' ANEX identity name http://{addr}")
            };
            eprintln!("countersign-host: warning: listening on {addr} without --public-url, so {what}; set --public-url to the origin counterparties reach this host at");
        }
        host.serve_until(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| format!("server failed: {e}"))
    })
}
