'use strict';
// The msgpack subset of liblock.wasm's exec messages (wasm/PROTOCOL.md §5):
// decoding of a request (arrays, uints, nil, str/bin) and encoding of a
// response (arrays, small ints, nil, str). Hand-written (≈100 lines) rather
// than a dependency: the messages use five types and the codec sits on the
// hot path of every Redis round trip.

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8Encoder = new TextEncoder();

/** Thrown for bytes that are not the msgpack this codec reads. */
class MsgpackError extends Error {}

/**
 * Decodes one msgpack value from `buf` (a Uint8Array). Reads nil, bool,
 * every int format, float64, str and bin (both as strings: Redis arguments
 * are byte strings the module built from UTF-8 text) and arrays.
 * @param {Uint8Array} buf
 * @returns {any}
 */
function decode(buf) {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  const need = (n) => {
    if (pos + n > buf.length) throw new MsgpackError(`msgpack: truncated at byte ${pos}`);
  };
  const str = (n) => {
    need(n);
    const s = utf8.decode(buf.subarray(pos, pos + n));
    pos += n;
    return s;
  };
  const arr = (n) => {
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = value();
    return out;
  };
  function value() {
    need(1);
    const b = buf[pos++];
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if ((b & 0xf0) === 0x90) return arr(b & 0x0f);
    if ((b & 0xe0) === 0xa0) return str(b & 0x1f);
    let v;
    switch (b) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: case 0xd9: need(1); return str(buf[pos++]);
      case 0xc5: case 0xda: need(2); v = view.getUint16(pos); pos += 2; return str(v);
      case 0xc6: case 0xdb: need(4); v = view.getUint32(pos); pos += 4; return str(v);
      case 0xcb: need(8); v = view.getFloat64(pos); pos += 8; return v;
      case 0xcc: need(1); return buf[pos++];
      case 0xcd: need(2); v = view.getUint16(pos); pos += 2; return v;
      case 0xce: need(4); v = view.getUint32(pos); pos += 4; return v;
      case 0xcf: need(8); v = Number(view.getBigUint64(pos)); pos += 8; return v;
      case 0xd0: need(1); v = view.getInt8(pos); pos += 1; return v;
      case 0xd1: need(2); v = view.getInt16(pos); pos += 2; return v;
      case 0xd2: need(4); v = view.getInt32(pos); pos += 4; return v;
      case 0xd3: need(8); v = Number(view.getBigInt64(pos)); pos += 8; return v;
      case 0xdc: need(2); v = view.getUint16(pos); pos += 2; return arr(v);
      case 0xdd: need(4); v = view.getUint32(pos); pos += 4; return arr(v);
      default: throw new MsgpackError(`msgpack: unsupported type byte 0x${b.toString(16)} at ${pos - 1}`);
    }
  }
  const v = value();
  if (pos !== buf.length) throw new MsgpackError(`msgpack: ${buf.length - pos} bytes after the value`);
  return v;
}

/**
 * A growable byte buffer that encodes the response types: arrays, nil,
 * integers (safe integers), and UTF-8 strings.
 */
class Encoder {
  constructor(size = 256) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
  }

  reset() { this.pos = 0; return this; }

  #room(n) {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
    this.view = new DataView(b.buffer);
  }

  nil() { this.#room(1); this.buf[this.pos++] = 0xc0; return this; }

  array(n) {
    this.#room(5);
    if (n < 16) this.buf[this.pos++] = 0x90 | n;
    else if (n < 0x10000) { this.buf[this.pos++] = 0xdc; this.view.setUint16(this.pos, n); this.pos += 2; }
    else { this.buf[this.pos++] = 0xdd; this.view.setUint32(this.pos, n); this.pos += 4; }
    return this;
  }

  int(v) {
    this.#room(9);
    if (v >= 0 && v <= 0x7f) this.buf[this.pos++] = v;
    else if (v < 0 && v >= -32) this.buf[this.pos++] = v & 0xff;
    else if (v >= -0x80000000 && v <= 0x7fffffff) { this.buf[this.pos++] = 0xd2; this.view.setInt32(this.pos, v); this.pos += 4; }
    else { this.buf[this.pos++] = 0xd3; this.view.setBigInt64(this.pos, BigInt(v)); this.pos += 8; }
    return this;
  }

  str(s) {
    // At most 3 bytes of UTF-8 per UTF-16 unit.
    this.#room(5 + s.length * 3);
    const start = this.pos + 5;
    const { written } = utf8Encoder.encodeInto(s, this.buf.subarray(start));
    let hdr;
    if (written < 32) hdr = 1;
    else if (written < 0x100) hdr = 2;
    else if (written < 0x10000) hdr = 3;
    else hdr = 5;
    // Move the bytes next to their header (written with room for the longest one).
    this.buf.copyWithin(this.pos + hdr, start, start + written);
    if (hdr === 1) this.buf[this.pos] = 0xa0 | written;
    else if (hdr === 2) { this.buf[this.pos] = 0xd9; this.buf[this.pos + 1] = written; }
    else if (hdr === 3) { this.buf[this.pos] = 0xda; this.view.setUint16(this.pos + 1, written); }
    else { this.buf[this.pos] = 0xdb; this.view.setUint32(this.pos + 1, written); }
    this.pos += hdr + written;
    return this;
  }

  /** The encoded bytes (a view into the encoder's buffer: copy before the next reset). */
  bytes() { return this.buf.subarray(0, this.pos); }
}

module.exports = { decode, Encoder, MsgpackError };
