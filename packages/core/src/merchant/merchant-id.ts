/** What a merchant identifier may be: the account's own id for a merchant, kept as given. */

/** The longest merchant id accepted. */
export const MERCHANT_ID_MAX = 128;

// Control characters (C0, DEL, C1), U+FFFE/U+FFFF and lone surrogates: nothing an id needs, and nothing XML can carry.
const FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` is a merchant id: 1–128 characters, no control characters, no white space at either end. */
export function isMerchantId(text: string): boolean {
  return text.length >= 1 && text.length <= MERCHANT_ID_MAX && text.trim() === text && !FORBIDDEN.test(text);
}
