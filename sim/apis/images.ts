// What an image costs a vision model's prefill: ceil(w/28)·ceil(h/28) tokens (a vision encoder's
// 14-pixel patches merged 2×2, as Qwen2-VL's), so prefill grows with image size as a real one's
// does. Read from the image's own header; the APIs differ only in how they carry the bytes.

/** Pixels per side of one image token. */
export const IMAGE_TOKEN_PIXELS = 28;

/** The tokens a PNG or JPEG image costs (its bytes, or at least their first 48 KiB), or null if it is neither. */
export function imageTokens(bytes: Buffer): number | null {
  const size = imageSize(bytes);
  return size && Math.ceil(size.width / IMAGE_TOKEN_PIXELS) * Math.ceil(size.height / IMAGE_TOKEN_PIXELS);
}

// Width and height from a PNG header (IHDR) or a JPEG start-of-frame marker.
function imageSize(bytes: Buffer): { width: number; height: number } | null {
  if (bytes.length >= 24 && bytes.toString('latin1', 1, 4) === 'PNG')
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  for (let i = 2; i + 9 < bytes.length && bytes[0] === 0xff && bytes[1] === 0xd8; ) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xc3) return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    i += 2 + bytes.readUInt16BE(i + 2);
  }
  return null;
}
