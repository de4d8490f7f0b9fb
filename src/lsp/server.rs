//! The server's loop: one thread owns the workspace and answers messages in order;
//! diagnostics are published after a quiet period (debounced) for every program whose
//! files changed. A handler that panics answers InternalError and the server goes on.

use crate::lsp::features;
use crate::lsp::transport::{Incoming, Outgoing};
use crate::lsp::workspace::{Analysis, ProgramKey, Workspace};
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long diagnostics wait for typing to pause.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// How the session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit` after `shutdown` (exit code 0).
    Clean,
    /// `exit` without `shutdown`, or the input ended first (exit code 1).
    Abrupt,
}

/// The client stopped reading: the writer could not deliver a message.
#[derive(Debug, PartialEq, Eq)]
pub struct ClientGone;

/// The server's state.
pub struct Server {
    out: Outgoing,
    ws: Workspace,
    initialized: bool,
    shutdown: bool,
    /// Programs whose diagnostics are due, and when.
    due: BTreeMap<ProgramKey, Instant>,
    /// URIs each program last published diagnostics for (to clear them later).
    published: BTreeMap<ProgramKey, Vec<String>>,
    debounce: Duration,
}

/// The capabilities this server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "\"".into()]),
            ..Default::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: features::TOKEN_TYPES.to_vec(),
                    token_modifiers: features::TOKEN_MODIFIERS.to_vec(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..Default::default()
            },
        )),
        ..Default::default()
    }
}

impl Server {
    pub fn new(out: Outgoing) -> Server {
        Server {
            out,
            ws: Workspace::default(),
            initialized: false,
            shutdown: false,
            due: BTreeMap::new(),
            published: BTreeMap::new(),
            debounce: DEBOUNCE,
        }
    }

    /// Serves until `exit` or the end of input; `Err` when the client is gone.
    pub fn run(&mut self, rx: &Receiver<Incoming>) -> Result<Exit, ClientGone> {
        loop {
            let next = self.due.values().min().copied();
            let item = match next {
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(item) => Some(item),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return Ok(Exit::Abrupt),
                    }
                }
                None => match rx.recv() {
                    Ok(item) => Some(item),
                    Err(_) => return Ok(Exit::Abrupt),
                },
            };
            match item {
                None => {
                    let published = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.publish_due()
                    }));
                    match published {
                        Ok(r) => r?,
                        Err(_) => {
                            self.due.clear();
                            self.log(MessageType::ERROR, "diagnostics failed inside the server")?;
                        }
                    }
                }
                Some(Incoming::Malformed { id, error }) => match id {
                    Some(id) => self.respond(Response::new_err(
                        id,
                        ErrorCode::InvalidRequest as i32,
                        error,
                    ))?,
                    None => self.log(MessageType::ERROR, &error)?,
                },
                Some(Incoming::Message(Message::Request(req))) => self.request(req)?,
                Some(Incoming::Message(Message::Notification(n))) => {
                    if n.method == notification::Exit::METHOD {
                        return Ok(if self.shutdown {
                            Exit::Clean
                        } else {
                            Exit::Abrupt
                        });
                    }
                    let method = n.method.clone();
                    let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.notification(n)
                    }));
                    match handled {
                        Ok(r) => r?,
                        Err(_) => self.log(
                            MessageType::ERROR,
                            &format!("{method} failed inside the server"),
                        )?,
                    }
                }
                Some(Incoming::Message(Message::Response(_))) => {}
            }
        }
    }

    fn send(&self, m: Message) -> Result<(), ClientGone> {
        self.out.send(m).map_err(|_| ClientGone)
    }

    fn respond(&self, r: Response) -> Result<(), ClientGone> {
        self.send(Message::Response(r))
    }

    fn log(&self, typ: MessageType, message: &str) -> Result<(), ClientGone> {
        self.send(Message::Notification(Notification::new(
            notification::LogMessage::METHOD.to_string(),
            LogMessageParams {
                typ,
                message: message.to_string(),
            },
        )))
    }

    fn request(&mut self, req: Request) -> Result<(), ClientGone> {
        let id = req.id.clone();
        if req.method == request::Initialize::METHOD {
            if self.initialized {
                return self.respond(Response::new_err(
                    id,
                    ErrorCode::InvalidRequest as i32,
                    "initialize was already received".into(),
                ));
            }
            self.initialized = true;
            let result = InitializeResult {
                capabilities: capabilities(),
                server_info: Some(ServerInfo {
                    name: "function-hcl-ls (fn-hcl)".into(),
                    version: Some(env!("CARGO_PKG_VERSION").into()),
                }),
            };
            let value = serde_json::to_value(result).unwrap_or(serde_json::Value::Null);
            return self.respond(Response {
                id,
                response_result: Ok(value),
            });
        }
        if !self.initialized {
            return self.respond(Response::new_err(
                id,
                ErrorCode::ServerNotInitialized as i32,
                format!("{} before initialize", req.method),
            ));
        }
        if self.shutdown {
            return self.respond(Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                format!("{} after shutdown", req.method),
            ));
        }
        if req.method == request::Shutdown::METHOD {
            self.shutdown = true;
            return self.respond(Response {
                id,
                response_result: Ok(serde_json::Value::Null),
            });
        }
        let method = req.method.clone();
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.answer(req)));
        let response = match answer {
            Ok(Ok(value)) => Response {
                id,
                response_result: Ok(value),
            },
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                format!("{method} failed inside the server"),
            ),
        };
        self.respond(response)
    }

    /// The result of a request, or an error (code, message).
    fn answer(&mut self, req: Request) -> Result<serde_json::Value, (ErrorCode, String)> {
        // The parameters move into their type (not copied: a message can be MiBs).
        fn params<P: serde::de::DeserializeOwned>(
            method: &str,
            raw: serde_json::Value,
        ) -> Result<P, (ErrorCode, String)> {
            serde_json::from_value(raw)
                .map_err(|e| (ErrorCode::InvalidParams, format!("{method}: {e}")))
        }
        fn json<R: serde::Serialize>(r: R) -> Result<serde_json::Value, (ErrorCode, String)> {
            serde_json::to_value(r).map_err(|e| (ErrorCode::InternalError, e.to_string()))
        }
        match req.method.as_str() {
            request::Completion::METHOD => {
                let p: CompletionParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position) else {
                    return json(None::<()>);
                };
                json(CompletionResponse::Array(features::completion(&a, f, byte)))
            }
            request::HoverRequest::METHOD => {
                let p: HoverParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position_params) else {
                    return json(None::<()>);
                };
                json(features::hover(&a, f, byte))
            }
            request::SignatureHelpRequest::METHOD => {
                let p: SignatureHelpParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position_params) else {
                    return json(None::<()>);
                };
                json(features::signature_help(&a, f, byte))
            }
            request::GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position_params) else {
                    return json(None::<()>);
                };
                json(features::definition(&a, f, byte).map(GotoDefinitionResponse::Scalar))
            }
            request::References::METHOD => {
                let p: ReferenceParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position) else {
                    return json(None::<()>);
                };
                json(features::references(
                    &a,
                    f,
                    byte,
                    p.context.include_declaration,
                ))
            }
            request::PrepareRenameRequest::METHOD => {
                let p: TextDocumentPositionParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p) else {
                    return json(None::<()>);
                };
                json(features::prepare_rename(&a, f, byte).map(PrepareRenameResponse::Range))
            }
            request::Rename::METHOD => {
                let p: RenameParams = params(&req.method, req.params)?;
                let Some((a, f, byte)) = self.locate(&p.text_document_position) else {
                    return Err((ErrorCode::InvalidParams, "unknown document".into()));
                };
                features::rename(&a, f, byte, &p.new_name)
                    .map_err(|e| (ErrorCode::InvalidParams, e))
                    .and_then(json)
            }
            request::DocumentSymbolRequest::METHOD => {
                let p: DocumentSymbolParams = params(&req.method, req.params)?;
                let Some((a, f)) = self.document(&p.text_document.uri) else {
                    return json(None::<()>);
                };
                json(DocumentSymbolResponse::Nested(features::document_symbols(
                    &a, f,
                )))
            }
            request::Formatting::METHOD => {
                let p: DocumentFormattingParams = params(&req.method, req.params)?;
                let Some(doc) = self.ws.docs.get(p.text_document.uri.as_str()) else {
                    return json(None::<()>);
                };
                json(features::formatting(&doc.text, &doc.lines))
            }
            request::CodeLensRequest::METHOD => {
                let p: CodeLensParams = params(&req.method, req.params)?;
                let Some((a, f)) = self.document(&p.text_document.uri) else {
                    return json(None::<()>);
                };
                json(features::code_lenses(&a, f))
            }
            request::SemanticTokensFullRequest::METHOD => {
                let p: SemanticTokensParams = params(&req.method, req.params)?;
                let Some((a, f)) = self.document(&p.text_document.uri) else {
                    return json(None::<()>);
                };
                json(SemanticTokensResult::Tokens(SemanticTokens {
                    result_id: None,
                    data: features::semantic_tokens(&a, f),
                }))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("method not supported: {other}"),
            )),
        }
    }

    /// The analysis and file of an open document.
    fn document(&mut self, uri: &Uri) -> Option<(Arc<Analysis>, crate::syntax::span::FileId)> {
        let uri = uri.as_str();
        let key = self.ws.key_of(uri);
        // An open document, or a file of a program with one open (its files on disk).
        if !self.ws.docs.contains_key(uri) && !self.ws.open_programs().contains(&key) {
            return None;
        }
        let a = self.ws.analysis(&key);
        let f = a.file_of(uri)?;
        Some((a, f))
    }

    /// The analysis, file and byte offset of a position in an open document.
    fn locate(
        &mut self,
        p: &TextDocumentPositionParams,
    ) -> Option<(Arc<Analysis>, crate::syntax::span::FileId, u32)> {
        let (a, f) = self.document(&p.text_document.uri)?;
        let byte = a.offset(f, p.position);
        Some((a, f, byte))
    }

    fn notification(&mut self, n: Notification) -> Result<(), ClientGone> {
        // The parameters move into their type (not copied: didOpen and didChange carry
        // whole documents).
        fn params<P: serde::de::DeserializeOwned>(raw: serde_json::Value) -> Option<P> {
            serde_json::from_value(raw).ok()
        }
        let Notification {
            method,
            params: raw,
        } = n;
        if !self.initialized {
            return Ok(());
        }
        let key = match method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Some(p) = params::<DidOpenTextDocumentParams>(raw) else {
                    return self.log(MessageType::ERROR, "didOpen: bad parameters");
                };
                let d = p.text_document;
                Some(self.ws.open(d.uri.as_str(), d.text, d.version))
            }
            notification::DidChangeTextDocument::METHOD => {
                let Some(p) = params::<DidChangeTextDocumentParams>(raw) else {
                    return self.log(MessageType::ERROR, "didChange: bad parameters");
                };
                self.ws.change(
                    p.text_document.uri.as_str(),
                    p.text_document.version,
                    p.content_changes,
                )
            }
            notification::DidCloseTextDocument::METHOD => {
                let Some(p) = params::<DidCloseTextDocumentParams>(raw) else {
                    return Ok(());
                };
                Some(self.ws.close(p.text_document.uri.as_str()))
            }
            notification::DidSaveTextDocument::METHOD => None,
            notification::DidChangeWatchedFiles::METHOD => {
                let Some(p) = params::<DidChangeWatchedFilesParams>(raw) else {
                    return Ok(());
                };
                for c in p.changes {
                    let key = self.ws.changed_on_disk(c.uri.as_str());
                    self.schedule(key);
                }
                None
            }
            _ => None,
        };
        if let Some(k) = key {
            self.schedule(k);
        }
        Ok(())
    }

    fn schedule(&mut self, key: ProgramKey) {
        self.due.insert(key, Instant::now() + self.debounce);
    }

    /// Publish the diagnostics of every program whose quiet period is over.
    fn publish_due(&mut self) -> Result<(), ClientGone> {
        let now = Instant::now();
        let ready: Vec<ProgramKey> = self
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in ready {
            self.due.remove(&key);
            self.publish(&key)?;
        }
        Ok(())
    }

    /// Publish a program's diagnostics, file by file (an empty list clears a file's).
    fn publish(&mut self, key: &ProgramKey) -> Result<(), ClientGone> {
        let open = self.ws.open_programs().contains(key);
        let mut by_uri: BTreeMap<String, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
        if open {
            let a = self.ws.analysis(key);
            for f in &a.files {
                by_uri.entry(f.uri.clone()).or_default();
            }
            for d in &a.diagnostics {
                let (i, range) = match d.subject {
                    Some(s) => a.range(s),
                    None => (0, Range::default()),
                };
                let Some(f) = a.files.get(i) else { continue };
                by_uri
                    .entry(f.uri.clone())
                    .or_default()
                    .push(to_lsp_diagnostic(d, range));
            }
        }
        for old in self.published.remove(key).unwrap_or_default() {
            by_uri.entry(old).or_default();
        }
        let mut now_published = Vec::new();
        for (uri, diagnostics) in by_uri {
            let Ok(parsed) = uri.parse::<Uri>() else {
                continue;
            };
            if !diagnostics.is_empty() {
                now_published.push(uri.clone());
            }
            let version = self.ws.docs.get(&uri).map(|d| d.version);
            self.send(Message::Notification(Notification::new(
                notification::PublishDiagnostics::METHOD.to_string(),
                PublishDiagnosticsParams {
                    uri: parsed,
                    diagnostics,
                    version,
                },
            )))?;
        }
        // Only programs with diagnostics to clear later are remembered (a program per
        // directory the client ever named would otherwise stay for the session).
        if !now_published.is_empty() {
            self.published.insert(key.clone(), now_published);
        }
        Ok(())
    }
}

/// One diagnostic as the protocol shows it: the summary, then hcl's detail.
pub fn to_lsp_diagnostic(
    d: &crate::syntax::diag::Diagnostic,
    range: Range,
) -> lsp_types::Diagnostic {
    let message = if d.detail.is_empty() {
        d.summary.to_string()
    } else {
        format!("{}; {}", d.summary, d.detail)
    };
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            crate::syntax::diag::Severity::Error => DiagnosticSeverity::ERROR,
            crate::syntax::diag::Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        source: Some("fn-hcl".into()),
        message,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notify(method: &str, params: serde_json::Value) -> Notification {
        Notification::new(method.into(), params)
    }

    #[test]
    fn programs_without_diagnostics_leave_no_state_behind() {
        let (out, _rx) = std::sync::mpsc::sync_channel(10_000);
        let mut s = Server::new(out);
        s.initialized = true;
        s.debounce = Duration::ZERO;
        // A change on disk in each of many directories, none of them open.
        let changes: Vec<serde_json::Value> = (0..1000)
            .map(|i| serde_json::json!({ "uri": format!("file:///d{i}/main.hcl"), "type": 2 }))
            .collect();
        s.notification(notify(
            notification::DidChangeWatchedFiles::METHOD,
            serde_json::json!({ "changes": changes }),
        ))
        .expect("client");
        assert_eq!(s.due.len(), 1000);
        s.publish_due().expect("client");
        assert!(s.due.is_empty());
        assert!(
            s.published.is_empty(),
            "{} programs kept",
            s.published.len()
        );
        // A program with diagnostics is remembered, to clear them when they are gone.
        let uri = "untitled:a.hcl";
        s.notification(notify(
            notification::DidOpenTextDocument::METHOD,
            serde_json::json!({ "textDocument": {
                "uri": uri, "languageId": "hcl", "version": 1, "text": "locals {\n  a = b\n}\n" } }),
        ))
        .expect("client");
        s.publish_due().expect("client");
        assert_eq!(s.published.len(), 1);
        s.notification(notify(
            notification::DidCloseTextDocument::METHOD,
            serde_json::json!({ "textDocument": { "uri": uri } }),
        ))
        .expect("client");
        s.publish_due().expect("client");
        assert!(s.published.is_empty());
    }
}
