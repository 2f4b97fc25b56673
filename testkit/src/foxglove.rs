//! A Foxglove WebSocket protocol client, as a viewer speaks it: connects with the
//! subprotocol, reads the server info and the advertised channels, subscribes, and decodes
//! each message with its channel's JSON Schema. For the live view's test and benchmark.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;
use tungstenite::{Message, WebSocket};

/// A channel the server advertised.
#[derive(Debug, Clone)]
pub struct Channel {
    /// The server's id for it.
    pub id: u64,
    /// Its topic.
    pub topic: String,
    /// The message encoding (`json`).
    pub encoding: String,
    /// The schema's name.
    pub schema_name: String,
    /// The schema's encoding (`jsonschema`).
    pub schema_encoding: String,
    /// The schema, parsed.
    pub schema: Json,
}

/// One message on a subscribed channel, decoded.
#[derive(Debug, Clone)]
pub struct Data {
    /// The channel's topic.
    pub topic: String,
    /// The message's timestamp (the server's log time), ns since the Unix epoch.
    pub log_time: u64,
    /// The message, parsed.
    pub json: Json,
    /// When the frame was read.
    pub read_at: Instant,
}

/// A connected client.
#[derive(Debug)]
pub struct Client {
    socket: WebSocket<TcpStream>,
    /// The subprotocol the server chose.
    pub subprotocol: String,
    /// The server's `serverInfo` message.
    pub server_info: Json,
    /// The advertised channels.
    pub channels: Vec<Channel>,
    subscriptions: HashMap<u32, usize>,
}

impl Client {
    /// Connects offering `subprotocols`, and reads the server info and the advertisement.
    ///
    /// # Errors
    /// A refused handshake or an unexpected first message, in words.
    pub fn connect(addr: SocketAddr, subprotocols: &[&str]) -> Result<Client, String> {
        let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .map_err(|e| e.to_string())?;
        let mut request = format!("ws://{addr}/")
            .into_client_request()
            .map_err(|e| e.to_string())?;
        if !subprotocols.is_empty() {
            request.headers_mut().insert(
                "Sec-WebSocket-Protocol",
                HeaderValue::from_str(&subprotocols.join(", ")).map_err(|e| e.to_string())?,
            );
        }
        let (mut socket, response) = tungstenite::client(request, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(tungstenite::Error::Http(r)) => {
                format!("refused: {}", r.status())
            }
            e => e.to_string(),
        })?;
        let subprotocol = response
            .headers()
            .get("Sec-WebSocket-Protocol")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut text = || -> Result<Json, String> {
            match socket.read().map_err(|e| e.to_string())? {
                Message::Text(t) => serde_json::from_str(t.as_str()).map_err(|e| e.to_string()),
                other => Err(format!("expected a JSON message, got {other:?}")),
            }
        };
        let server_info = text()?;
        let advertise = text()?;
        if server_info["op"] != "serverInfo" || advertise["op"] != "advertise" {
            return Err(format!(
                "expected serverInfo and advertise: {server_info} {advertise}"
            ));
        }
        let channels = advertise["channels"]
            .as_array()
            .ok_or("no channels")?
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                Ok(Channel {
                    id: c["id"].as_u64().ok_or("a channel without id")?,
                    topic: s("topic"),
                    encoding: s("encoding"),
                    schema_name: s("schemaName"),
                    schema_encoding: s("schemaEncoding"),
                    schema: serde_json::from_str(c["schema"].as_str().unwrap_or("null"))
                        .map_err(|e| e.to_string())?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Client {
            socket,
            subprotocol,
            server_info,
            channels,
            subscriptions: HashMap::new(),
        })
    }

    /// Subscribes to the channels of these topics (every advertised one when empty).
    ///
    /// # Errors
    /// A topic not advertised; a failed write.
    pub fn subscribe(&mut self, topics: &[&str]) -> Result<(), String> {
        let mut list = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if topics.is_empty() || topics.contains(&c.topic.as_str()) {
                let id = 100 + u32::try_from(i).map_err(|e| e.to_string())?;
                self.subscriptions.insert(id, i);
                list.push(serde_json::json!({"id": id, "channelId": c.id}));
            }
        }
        if list.len() < topics.len() {
            return Err(format!("not all of {topics:?} are advertised"));
        }
        let request = serde_json::json!({"op": "subscribe", "subscriptions": list});
        self.socket
            .send(Message::text(request.to_string()))
            .map_err(|e| e.to_string())
    }

    /// Sends a ping and waits for its pong, skipping message data.
    ///
    /// # Errors
    /// A failed write, a broken connection, or no pong within the read timeout (5 s).
    pub fn ping(&mut self, payload: &[u8]) -> Result<(), String> {
        self.socket
            .send(Message::Ping(payload.to_vec().into()))
            .map_err(|e| e.to_string())?;
        loop {
            match self.socket.read().map_err(|e| e.to_string())? {
                Message::Pong(p) if p.as_ref() == payload => return Ok(()),
                Message::Close(frame) => return Err(format!("closed instead: {frame:?}")),
                _ => {}
            }
        }
    }

    /// Closes as a viewer does (code 1000) and waits for the server's Close: the code it
    /// answered with (`None` for a Close without one, 1005 to the client).
    ///
    /// # Errors
    /// The connection ended without the server's Close (a browser's 1006, "abnormal
    /// closure"), or no answer within the read timeout (5 s).
    pub fn close(mut self) -> Result<Option<u16>, String> {
        self.socket
            .close(Some(tungstenite::protocol::CloseFrame {
                code: tungstenite::protocol::frame::coding::CloseCode::Normal,
                reason: "done".into(),
            }))
            .map_err(|e| e.to_string())?;
        self.closed_by_server()
    }

    /// Reads until the server's Close frame, skipping message data: the code it carried.
    ///
    /// # Errors
    /// The connection ended without a Close frame, or the read timeout (5 s) passed.
    pub fn closed_by_server(&mut self) -> Result<Option<u16>, String> {
        loop {
            match self.socket.read() {
                Ok(Message::Close(frame)) => return Ok(frame.map(|f| u16::from(f.code))),
                Ok(_) => {}
                Err(e) => return Err(format!("no Close frame from the server: {e}")),
            }
        }
    }

    /// The next message on a subscribed channel, decoded and checked against its schema.
    ///
    /// # Errors
    /// A frame that is not message data of a subscription, JSON that does not fit the
    /// channel's schema, a broken connection or the read timeout (5 s).
    pub fn message(&mut self) -> Result<Data, String> {
        let (i, log_time, payload, read_at) = self.frame()?;
        let channel = &self.channels[i];
        let json: Json = serde_json::from_slice(&payload).map_err(|e| e.to_string())?;
        validate(&channel.schema, &json).map_err(|e| format!("{}: {e}: {json}", channel.topic))?;
        Ok(Data {
            topic: channel.topic.clone(),
            log_time,
            json,
            read_at,
        })
    }

    /// The next message on a subscribed channel, not decoded: the index of its channel in
    /// [`Client::channels`], its log time, its bytes and when it was read. For a reader
    /// that must keep up with a fast stream.
    ///
    /// # Errors
    /// A frame that is not message data of a subscription, a broken connection or the
    /// read timeout (5 s).
    pub fn frame(&mut self) -> Result<(usize, u64, Vec<u8>, Instant), String> {
        loop {
            let bytes = match self.socket.read().map_err(|e| e.to_string())? {
                Message::Binary(b) => b,
                Message::Text(_) | Message::Ping(_) | Message::Pong(_) => continue,
                other => return Err(format!("unexpected {other:?}")),
            };
            let read_at = Instant::now();
            let (&op, rest) = bytes.split_first().ok_or("an empty frame")?;
            if op != 1 || rest.len() < 12 {
                return Err(format!(
                    "opcode {op}, {} bytes: no message data",
                    bytes.len()
                ));
            }
            let id = u32::from_le_bytes(rest[..4].try_into().map_err(|_| "short")?);
            let log_time = u64::from_le_bytes(rest[4..12].try_into().map_err(|_| "short")?);
            let &i = self
                .subscriptions
                .get(&id)
                .ok_or(format!("subscription {id} was never made"))?;
            return Ok((i, log_time, rest[12..].to_vec(), read_at));
        }
    }
}

/// Checks `value` against the JSON Schema keywords the view's schemas use: `type`
/// (object, array, number, integer, string, boolean), `properties`, `required`, `items`,
/// `minItems`, `maxItems`, `enum`, `minimum`, `maximum`.
///
/// # Errors
/// Where the value does not fit, in words.
pub fn validate(schema: &Json, value: &Json) -> Result<(), String> {
    if let Some(t) = schema.get("type").and_then(Json::as_str) {
        let fits = match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            // A non-finite double is null in the view's JSON.
            "number" => value.is_number() || value.is_null(),
            "integer" => value.is_i64() || value.is_u64(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            other => return Err(format!("schema type `{other}` not supported")),
        };
        if !fits {
            return Err(format!("{value} is no {t}"));
        }
    }
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (k, s) in props {
            if let Some(v) = value.get(k) {
                validate(s, v).map_err(|e| format!("{k}: {e}"))?;
            }
        }
    }
    for k in schema
        .get("required")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let k = k.as_str().unwrap_or_default();
        if value.get(k).is_none() {
            return Err(format!("`{k}` is missing"));
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as u64;
        if schema
            .get("minItems")
            .and_then(Json::as_u64)
            .is_some_and(|n| len < n)
            || schema
                .get("maxItems")
                .and_then(Json::as_u64)
                .is_some_and(|n| len > n)
        {
            return Err(format!("{len} items"));
        }
        if let Some(s) = schema.get("items") {
            for v in items {
                validate(s, v)?;
            }
        }
    }
    if let Some(options) = schema.get("enum").and_then(Json::as_array)
        && !options.contains(value)
    {
        return Err(format!("{value} is none of {options:?}"));
    }
    if let Some(n) = value.as_f64()
        && (schema
            .get("minimum")
            .and_then(Json::as_f64)
            .is_some_and(|m| n < m)
            || schema
                .get("maximum")
                .and_then(Json::as_f64)
                .is_some_and(|m| n > m))
    {
        return Err(format!("{n} out of range"));
    }
    Ok(())
}
