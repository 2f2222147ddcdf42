/**
 * Text that strangers can write on chain (token names, NFT metadata, revert reasons) and
 * that must stay data in every sink: chat mentions, markup, header injection, bidi and
 * zero-width tricks, template syntax and sheer size. Served when `hostile` is on.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "<!channel> <!here> <@U024BE7LH> @everyone @here free airdrop",
  "<script>alert(1)</script><img src=x onerror=alert(2)>",
  "line one\r\nBcc: victim@example.com\r\nSubject: injected\r\n\r\nbody",
  "invoice\u202Egnp.exe",
  "zero\u200Bwidth\u200C\u200Djoin\uFEFFer\u2060",
  "[click here](https://evil.example/steal) <https://evil.example|Kaia support> *bold* _it_ ~s~ `code`",
  "{{ secrets.api_key }} ${KAIASCAN_API_KEY} %s %n {0} <%= 7*7 %>",
  "\"quoted\" 'single' & ampersand </td></tr></table>",
  "null\u0000byte and \u001b[31mANSI red\u001b[0m",
  "\u0645\u0631\u062D\u0628\u0627 mixed RTL \u05E9\u05DC\u05D5\u05DD and emoji \uD83D\uDE80\uD83D\uDD25",
  "javascript:alert(document.cookie)",
];

/** A 100 KB string of mixed hostile pieces, for size limits and truncation. */
export function hostileLong(bytes = 100 * 1024): string {
  let out = "";
  let i = 0;
  while (out.length < bytes) out += `${HOSTILE_STRINGS[i++ % HOSTILE_STRINGS.length]} `;
  return out.slice(0, bytes);
}
