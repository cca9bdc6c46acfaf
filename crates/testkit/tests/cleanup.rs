//! Nothing is left behind when a test process dies without cleaning up: a
//! child test process starts a PostgreSQL cluster and nginx, then is killed
//! with SIGKILL (no destructor runs); the watchdogs stop both and remove
//! their directories.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use countersign_testkit::nginx::Nginx;
use countersign_testkit::postgres::Cluster;

#[test]
#[ignore = "the child process of the cleanup test; it runs it"]
fn child_starts_a_cluster_and_nginx_and_waits_to_be_killed() {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("{e}"));
    let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nginx = Nginx::start(&[upstream.local_addr().unwrap()]).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "ready {} {} {}",
        cluster.dir().display(),
        nginx.dir().display(),
        nginx.addr()
    );
    std::thread::sleep(Duration::from_secs(600));
}

fn gone_within(what: &str, timeout: Duration, mut gone: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !gone() {
        assert!(Instant::now() < deadline, "{what} is still there");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_test_process_leaves_no_cluster_and_no_nginx_behind() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_starts_a_cluster_and_nginx_and_waits_to_be_killed",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    while !line.contains("ready ") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the child ended before it was ready"
        );
    }
    let fields: Vec<&str> = line[line.find("ready ").unwrap()..]
        .split_whitespace()
        .collect();
    let (pg_dir, nginx_dir) = (PathBuf::from(fields[1]), PathBuf::from(fields[2]));
    let nginx_addr: std::net::SocketAddr = fields[3].parse().unwrap();
    let postmaster: u32 = std::fs::read_to_string(pg_dir.join("data/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        std::net::TcpStream::connect(nginx_addr).is_ok(),
        "nginx is up"
    );

    child.kill().unwrap(); // SIGKILL: no destructor, no unwinding
    child.wait().unwrap();

    let alive = |pid: u32| PathBuf::from(format!("/proc/{pid}")).exists();
    gone_within("postgres", Duration::from_secs(20), || !alive(postmaster));
    gone_within("the cluster's directory", Duration::from_secs(20), || {
        !pg_dir.exists()
    });
    gone_within("nginx's listening socket", Duration::from_secs(10), || {
        std::net::TcpStream::connect(nginx_addr).is_err()
    });
    gone_within("nginx's directory", Duration::from_secs(10), || {
        !nginx_dir.exists()
    });
}
