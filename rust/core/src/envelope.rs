//! Msgpack encoding of checkpoint envelopes, byte-identical to
//! `ormsgpack.packb(obj, option=OPT_NON_STR_KEYS)` for plain value trees, and a bounds-checked
//! decoder for the same subset.
//!
//! ormsgpack's choices (verified against ormsgpack): non-negative ints use the smallest
//! *unsigned* form (fixint, uint8/16/32/64), negative ints the smallest signed form; floats are
//! always float64; str/bin/array/map use the smallest length header; map keys keep their type.
//! Containers may nest at most [`MAX_ENCODE_DEPTH`] deep (ormsgpack's recursion limit).

use std::fmt;

/// Deepest container nesting `ormsgpack.packb` accepts.
pub const MAX_ENCODE_DEPTH: usize = 255;
/// Deepest container nesting the decoder accepts (protects the stack from hostile input).
pub const MAX_DECODE_DEPTH: usize = 512;

/// A msgpack value tree. Maps keep insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    /// Only for values above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

/// Why a value cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    pub message: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}

/// Why bytes cannot be decoded; `offset` is where the problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    pub offset: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for DecodeError {}

// ---------------------------------------------------------------- writer primitives

pub fn write_nil(buf: &mut Vec<u8>) {
    buf.push(0xc0);
}

pub fn write_bool(buf: &mut Vec<u8>, b: bool) {
    buf.push(if b { 0xc3 } else { 0xc2 });
}

pub fn write_u64(buf: &mut Vec<u8>, v: u64) {
    if v <= 0x7f {
        buf.push(v as u8);
    } else if v <= 0xff {
        buf.extend_from_slice(&[0xcc, v as u8]);
    } else if v <= 0xffff {
        buf.push(0xcd);
        buf.extend_from_slice(&(v as u16).to_be_bytes());
    } else if v <= 0xffff_ffff {
        buf.push(0xce);
        buf.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        buf.push(0xcf);
        buf.extend_from_slice(&v.to_be_bytes());
    }
}

pub fn write_i64(buf: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        write_u64(buf, v as u64);
    } else if v >= -32 {
        buf.push(v as i8 as u8);
    } else if v >= i64::from(i8::MIN) {
        buf.extend_from_slice(&[0xd0, v as i8 as u8]);
    } else if v >= i64::from(i16::MIN) {
        buf.push(0xd1);
        buf.extend_from_slice(&(v as i16).to_be_bytes());
    } else if v >= i64::from(i32::MIN) {
        buf.push(0xd2);
        buf.extend_from_slice(&(v as i32).to_be_bytes());
    } else {
        buf.push(0xd3);
        buf.extend_from_slice(&v.to_be_bytes());
    }
}

pub fn write_f64(buf: &mut Vec<u8>, v: f64) {
    buf.push(0xcb);
    buf.extend_from_slice(&v.to_bits().to_be_bytes());
}

fn too_long(what: &str, len: usize) -> EncodeError {
    EncodeError {
        message: format!("{what} of length {len} exceeds the msgpack limit"),
    }
}

pub fn write_str(buf: &mut Vec<u8>, s: &str) -> Result<(), EncodeError> {
    write_str_bytes(buf, s.as_bytes())
}

/// A msgpack length header: the fix form `fix | n` for `n < fix_below` (0: the type has
/// none), then the 8-bit form (`has8`: its marker is `m16 - 1`), the 16-bit form `m16`
/// and the 32-bit form `m16 + 1`, the smallest that holds `n` (str, bin, array and map
/// headers are all this ladder).
#[inline(always)]
fn write_len_header(
    buf: &mut Vec<u8>,
    n: usize,
    (fix, fix_below): (u8, usize),
    has8: bool,
    m16: u8,
    what: &str,
) -> Result<(), EncodeError> {
    if n < fix_below {
        buf.push(fix | n as u8);
    } else if has8 && n <= 0xff {
        buf.extend_from_slice(&[m16 - 1, n as u8]);
    } else if n <= 0xffff {
        buf.push(m16);
        buf.extend_from_slice(&(n as u16).to_be_bytes());
    } else if n <= 0xffff_ffff {
        buf.push(m16 + 1);
        buf.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        return Err(too_long(what, n));
    }
    Ok(())
}

/// Writes `s` (already valid UTF-8) as a msgpack str.
pub fn write_str_bytes(buf: &mut Vec<u8>, s: &[u8]) -> Result<(), EncodeError> {
    // one capacity check for header and payload
    buf.reserve(s.len() + 5);
    write_len_header(buf, s.len(), (0xa0, 32), true, 0xda, "str")?;
    buf.extend_from_slice(s);
    Ok(())
}

pub fn write_bin(buf: &mut Vec<u8>, b: &[u8]) -> Result<(), EncodeError> {
    write_len_header(buf, b.len(), (0, 0), true, 0xc5, "bytes")?;
    buf.extend_from_slice(b);
    Ok(())
}

pub fn write_array_header(buf: &mut Vec<u8>, n: usize) -> Result<(), EncodeError> {
    write_len_header(buf, n, (0x90, 16), false, 0xdc, "array")
}

pub fn write_map_header(buf: &mut Vec<u8>, n: usize) -> Result<(), EncodeError> {
    write_len_header(buf, n, (0x80, 16), false, 0xde, "map")
}

/// The error ormsgpack raises past [`MAX_ENCODE_DEPTH`].
pub fn depth_error() -> EncodeError {
    EncodeError {
        message: "Recursion limit reached".to_string(),
    }
}

// ---------------------------------------------------------------- tree encoder

/// Encodes a value tree (same bytes as ormsgpack for the equivalent Python object).
pub fn encode(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(128);
    encode_into(&mut buf, value, 0)?;
    Ok(buf)
}

fn encode_into(buf: &mut Vec<u8>, value: &Value, depth: usize) -> Result<(), EncodeError> {
    match value {
        Value::Nil => write_nil(buf),
        Value::Bool(b) => write_bool(buf, *b),
        Value::Int(i) => write_i64(buf, *i),
        Value::UInt(u) => write_u64(buf, *u),
        Value::Float(f) => write_f64(buf, *f),
        Value::Str(s) => write_str(buf, s)?,
        Value::Bin(b) => write_bin(buf, b)?,
        Value::Array(items) => {
            if depth >= MAX_ENCODE_DEPTH {
                return Err(depth_error());
            }
            write_array_header(buf, items.len())?;
            for item in items {
                encode_into(buf, item, depth + 1)?;
            }
        }
        Value::Map(entries) => {
            if depth >= MAX_ENCODE_DEPTH {
                return Err(depth_error());
            }
            write_map_header(buf, entries.len())?;
            for (k, v) in entries {
                encode_into(buf, k, depth + 1)?;
                encode_into(buf, v, depth + 1)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- reader

/// One msgpack item header; containers give their element count.
#[derive(Debug, Clone, PartialEq)]
pub enum Token<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    /// Only for uint64 values above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext(i8, &'a [u8]),
}

/// A bounds-checked pull reader over msgpack bytes.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not consumed yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// An error located at the current position.
    pub fn error(&self, message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
            offset: self.pos,
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.error("unexpected end of data"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// The length after an 8-, 16- or 32-bit form's marker: `form` 0, 1 or 2 (each type's
    /// three markers are consecutive, so it is the marker minus the 8-bit one's).
    #[inline(always)]
    fn len_of(&mut self, form: u8) -> Result<usize, DecodeError> {
        Ok(match form {
            0 => usize::from(self.take_array::<1>()?[0]),
            1 => usize::from(u16::from_be_bytes(self.take_array()?)),
            _ => u32::from_be_bytes(self.take_array()?) as usize,
        })
    }

    fn str_of(&mut self, n: usize) -> Result<Token<'a>, DecodeError> {
        let start = self.pos;
        let raw = self.take(n)?;
        std::str::from_utf8(raw)
            .map(Token::Str)
            .map_err(|_| DecodeError {
                message: "invalid UTF-8 string".to_string(),
                offset: start,
            })
    }

    fn ext_of(&mut self, n: usize) -> Result<Token<'a>, DecodeError> {
        let code = self.take_array::<1>()?[0] as i8;
        Ok(Token::Ext(code, self.take(n)?))
    }

    /// Reads the next item header (and the payload of scalars, strings, bins and exts).
    pub fn next_token(&mut self) -> Result<Token<'a>, DecodeError> {
        let marker = self.take_array::<1>()?[0];
        Ok(match marker {
            0x00..=0x7f => Token::Int(i64::from(marker)),
            0x80..=0x8f => Token::Map(usize::from(marker & 0x0f)),
            0x90..=0x9f => Token::Array(usize::from(marker & 0x0f)),
            0xa0..=0xbf => return self.str_of(usize::from(marker & 0x1f)),
            0xc0 => Token::Nil,
            0xc1 => {
                self.pos -= 1;
                return Err(self.error("reserved msgpack marker 0xc1"));
            }
            0xc2 => Token::Bool(false),
            0xc3 => Token::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len_of(marker - 0xc4)?;
                Token::Bin(self.take(n)?)
            }
            0xc7..=0xc9 => {
                let n = self.len_of(marker - 0xc7)?;
                return self.ext_of(n);
            }
            0xca => Token::Float(f64::from(f32::from_be_bytes(self.take_array()?))),
            0xcb => Token::Float(f64::from_be_bytes(self.take_array()?)),
            0xcc => Token::Int(i64::from(self.take_array::<1>()?[0])),
            0xcd => Token::Int(i64::from(u16::from_be_bytes(self.take_array()?))),
            0xce => Token::Int(i64::from(u32::from_be_bytes(self.take_array()?))),
            0xcf => {
                let u = u64::from_be_bytes(self.take_array()?);
                match i64::try_from(u) {
                    Ok(i) => Token::Int(i),
                    Err(_) => Token::UInt(u),
                }
            }
            0xd0 => Token::Int(i64::from(i8::from_be_bytes(self.take_array()?))),
            0xd1 => Token::Int(i64::from(i16::from_be_bytes(self.take_array()?))),
            0xd2 => Token::Int(i64::from(i32::from_be_bytes(self.take_array()?))),
            0xd3 => Token::Int(i64::from_be_bytes(self.take_array()?)),
            0xd4 => return self.ext_of(1),
            0xd5 => return self.ext_of(2),
            0xd6 => return self.ext_of(4),
            0xd7 => return self.ext_of(8),
            0xd8 => return self.ext_of(16),
            0xd9..=0xdb => {
                let n = self.len_of(marker - 0xd9)?;
                return self.str_of(n);
            }
            // arrays and maps have no 8-bit form: 16 and 32 bits are forms 1 and 2
            0xdc | 0xdd => Token::Array(self.len_of(marker - 0xdb)?),
            0xde | 0xdf => Token::Map(self.len_of(marker - 0xdd)?),
            0xe0..=0xff => Token::Int(i64::from(marker as i8)),
        })
    }
}

// ---------------------------------------------------------------- tree decoder

/// Decodes exactly one value spanning all of `data` (trailing bytes are an error).
pub fn decode(data: &[u8]) -> Result<Value, DecodeError> {
    let mut r = Reader::new(data);
    let v = decode_value(&mut r, 0)?;
    if r.remaining() != 0 {
        return Err(r.error("trailing data after the msgpack value"));
    }
    Ok(v)
}

fn decode_value(r: &mut Reader<'_>, depth: usize) -> Result<Value, DecodeError> {
    let at = r.position();
    Ok(match r.next_token()? {
        Token::Nil => Value::Nil,
        Token::Bool(b) => Value::Bool(b),
        Token::Int(i) => Value::Int(i),
        Token::UInt(u) => Value::UInt(u),
        Token::Float(f) => Value::Float(f),
        Token::Str(s) => Value::Str(s.to_string()),
        Token::Bin(b) => Value::Bin(b.to_vec()),
        Token::Array(n) => {
            if depth >= MAX_DECODE_DEPTH {
                return Err(r.error("msgpack nesting too deep"));
            }
            // every element takes at least one byte: never trust the declared length
            let mut items = Vec::with_capacity(n.min(r.remaining()));
            for _ in 0..n {
                items.push(decode_value(r, depth + 1)?);
            }
            Value::Array(items)
        }
        Token::Map(n) => {
            if depth >= MAX_DECODE_DEPTH {
                return Err(r.error("msgpack nesting too deep"));
            }
            let mut entries = Vec::with_capacity(n.min(r.remaining() / 2));
            for _ in 0..n {
                let k = decode_value(r, depth + 1)?;
                let v = decode_value(r, depth + 1)?;
                entries.push((k, v));
            }
            Value::Map(entries)
        }
        Token::Ext(code, _) => {
            return Err(DecodeError {
                message: format!("unsupported msgpack extension type {code}"),
                offset: at,
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn enc(v: Value) -> String {
        hex(&encode(&v).unwrap())
    }

    // Expected bytes were produced once by `ormsgpack.packb(x, option=OPT_NON_STR_KEYS)`
    // (ormsgpack as pinned in .venv) and pasted here.
    #[test]
    fn ints_match_ormsgpack() {
        let cases: [(i64, &str); 16] = [
            (0, "00"),
            (127, "7f"),
            (128, "cc80"),
            (255, "ccff"),
            (256, "cd0100"),
            (65535, "cdffff"),
            (65536, "ce00010000"),
            (4294967296, "cf0000000100000000"),
            (-1, "ff"),
            (-32, "e0"),
            (-33, "d0df"),
            (-128, "d080"),
            (-129, "d1ff7f"),
            (-32769, "d2ffff7fff"),
            (-2147483649, "d3ffffffff7fffffff"),
            (i64::MIN, "d38000000000000000"),
        ];
        for (v, want) in cases {
            assert_eq!(enc(Value::Int(v)), want, "{v}");
        }
        assert_eq!(enc(Value::UInt(u64::MAX)), "cfffffffffffffffff");
    }

    #[test]
    fn scalars_and_containers_match_ormsgpack() {
        assert_eq!(enc(Value::Float(1.5)), "cb3ff8000000000000");
        assert_eq!(enc(Value::Float(-0.0)), "cb8000000000000000");
        assert_eq!(enc(Value::Nil), "c0");
        assert_eq!(enc(Value::Bool(true)), "c3");
        assert_eq!(enc(Value::Str(String::new())), "a0");
        assert_eq!(&enc(Value::Str("a".repeat(32)))[..4], "d920");
        assert_eq!(&enc(Value::Str("a".repeat(256)))[..6], "da0100");
        assert_eq!(&enc(Value::Str("a".repeat(65536)))[..10], "db00010000");
        assert_eq!(enc(Value::Bin(vec![])), "c400");
        assert_eq!(&enc(Value::Bin(vec![b'x'; 256]))[..6], "c50100");
        assert_eq!(&enc(Value::Array(vec![Value::Int(1); 16]))[..6], "dc0010");
        assert_eq!(
            enc(Value::Map(vec![(Value::Int(1), Value::Int(2))])),
            "810102"
        );
        assert_eq!(enc(Value::Map(vec![(Value::Nil, Value::Int(1))])), "81c001");
    }

    /// Every length form at its boundaries: the header bytes (msgpack's ladder, as
    /// ormsgpack writes it) and the decoder reading each form back.
    #[test]
    fn length_headers_at_every_boundary() {
        let str_of = |n: usize| Value::Str("a".repeat(n));
        let bin_of = |n: usize| Value::Bin(vec![7; n]);
        let arr_of = |n: usize| Value::Array(vec![Value::Nil; n]);
        let map_of =
            |n: usize| Value::Map((0..n as i64).map(|i| (Value::Int(i), Value::Nil)).collect());
        type Case = (fn(usize) -> Value, usize, &'static str);
        let cases: [Case; 19] = [
            (str_of, 31, "bf"),
            (str_of, 32, "d920"),
            (str_of, 255, "d9ff"),
            (str_of, 256, "da0100"),
            (str_of, 65535, "daffff"),
            (str_of, 65536, "db00010000"),
            (bin_of, 0, "c400"),
            (bin_of, 255, "c4ff"),
            (bin_of, 256, "c50100"),
            (bin_of, 65535, "c5ffff"),
            (bin_of, 65536, "c600010000"),
            (arr_of, 15, "9f"),
            (arr_of, 16, "dc0010"),
            (arr_of, 65535, "dcffff"),
            (arr_of, 65536, "dd00010000"),
            (map_of, 15, "8f"),
            (map_of, 16, "de0010"),
            (map_of, 65535, "deffff"),
            (map_of, 65536, "df00010000"),
        ];
        for (make, n, head) in cases {
            let v = make(n);
            let bytes = encode(&v).unwrap();
            assert_eq!(hex(&bytes[..head.len() / 2]), head, "{n}");
            assert_eq!(decode(&bytes).unwrap(), v, "{n}");
        }
        // ext payloads (decoded, never written): 8-, 16- and 32-bit lengths
        let mut r = Reader::new(b"\xc7\x01\x05x\xc8\x00\x01\x05y\xc9\x00\x00\x00\x01\x05z");
        for want in [b"x", b"y", b"z"] {
            assert!(matches!(r.next_token().unwrap(), Token::Ext(5, got) if got == want));
        }
    }

    #[test]
    fn depth_limit_matches_ormsgpack() {
        // ormsgpack accepts 255 nested lists and rejects 256
        let nest = |n: usize| (1..n).fold(Value::Array(vec![]), |v, _| Value::Array(vec![v]));
        assert!(encode(&nest(255)).is_ok());
        assert!(encode(&nest(256)).is_err());
    }

    #[test]
    fn decode_round_trips() {
        let v = Value::Map(vec![
            (Value::Str("v".into()), Value::Int(4)),
            (Value::Str("big".into()), Value::UInt(u64::MAX)),
            (
                Value::Int(-7),
                Value::Array(vec![Value::Float(0.25), Value::Nil]),
            ),
            (Value::Bin(vec![1, 2]), Value::Bool(false)),
        ]);
        assert_eq!(decode(&encode(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn decode_rejects_bad_input() {
        for bad in [
            &b""[..],
            b"\xc1",
            b"\x81",
            b"\x91",
            b"\xa3ab",
            b"\xa2\xff\x00",
            b"\xdd\xff\xff\xff\xff",
            b"\xd4\x00\x00",
            b"\xc3\xc3",
            b"\xce\x00\x00",
        ] {
            assert!(decode(bad).is_err(), "{bad:?}");
        }
        let deep = vec![0x91u8; 100_000];
        assert!(decode(&deep).is_err());
        assert_eq!(decode(b"\xca\x3f\xc0\x00\x00").unwrap(), Value::Float(1.5));
    }
}
