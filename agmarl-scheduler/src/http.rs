//! The metrics and probe server: `GET /metrics`, `/healthz`, `/readyz`.

use crate::health::{Health, Verdict};
use crate::metrics::{CONTENT_TYPE, Metrics};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE as CONTENT_TYPE_HEADER, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// What the handlers read.
#[derive(Debug, Clone)]
pub struct Shared {
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
}

fn text(status: StatusCode, body: String, content_type: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE_HEADER, HeaderValue::from_static(content_type));
    response
}

fn probe(verdict: Verdict) -> Response<Full<Bytes>> {
    let status = if verdict.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    text(status, format!("{}\n", verdict.reason), "text/plain; charset=utf-8")
}

/// The answer to one request (no I/O: testable without a socket).
pub fn respond(shared: &Shared, method: &Method, path: &str) -> Response<Full<Bytes>> {
    const PLAIN: &str = "text/plain; charset=utf-8";
    if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into(), PLAIN);
    }
    match path {
        "/metrics" => match shared.metrics.encode() {
            Ok(body) => text(StatusCode::OK, body, CONTENT_TYPE),
            Err(_) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot encode the metrics\n".into(),
                PLAIN,
            ),
        },
        "/healthz" | "/livez" => probe(shared.health.live(Instant::now())),
        "/readyz" => probe(shared.health.ready()),
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: try /metrics, /healthz or /readyz\n".into(),
            PLAIN,
        ),
    }
}

/// Binds `addr` (errors here, before anything else starts, name the address).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// Serves on `listener` until `stop` fires.
pub async fn serve(listener: TcpListener, shared: Shared, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(conn) => conn,
            Err(err) => {
                // e.g. out of file descriptors: keep serving the others
                tracing::warn!(error = %err, "http: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let shared = shared.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let response = respond(&shared, req.method(), req.uri().path());
                async move { Ok::<_, Infallible>(response) }
            });
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                result = conn => if let Err(err) = result {
                    tracing::debug!(%peer, error = %err, "http: connection failed");
                },
                () = stop.cancelled() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Role;
    use http_body_util::BodyExt;

    async fn body(r: Response<Full<Bytes>>) -> String {
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn routes_answer_with_status_and_type() {
        let shared = Shared {
            metrics: Arc::new(Metrics::new()),
            health: Arc::new(Health::default()),
        };
        let m = respond(&shared, &Method::GET, "/metrics");
        assert_eq!(m.status(), StatusCode::OK);
        assert_eq!(m.headers()[CONTENT_TYPE_HEADER], CONTENT_TYPE);
        assert!(body(m).await.contains("agmarl_leader 0"));
        assert_eq!(respond(&shared, &Method::GET, "/healthz").status(), StatusCode::OK);
        let r = respond(&shared, &Method::GET, "/readyz");
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(body(r).await.contains("not listed"));
        shared.health.set_synced(true);
        shared.health.set_role(Role::Follower);
        assert_eq!(respond(&shared, &Method::GET, "/readyz").status(), StatusCode::OK);
        assert_eq!(respond(&shared, &Method::GET, "/nope").status(), StatusCode::NOT_FOUND);
        assert_eq!(
            respond(&shared, &Method::POST, "/metrics").status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    #[tokio::test]
    async fn serves_over_tcp_until_stopped() {
        let shared = Shared {
            metrics: Arc::new(Metrics::new()),
            health: Arc::new(Health::default()),
        };
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(listener, shared, stop.clone()));
        let answer = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        })
        .await
        .unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("ok\n"), "{answer}");
        stop.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap();
    }
}
