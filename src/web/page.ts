// Page responses: one layout, and the headers every page carries (no framing, no caching, no
// referrer; security-cases A6).
import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from './html.js';

export const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

export interface PageUser {
  username: string;
  name: string;
}

export interface PageOptions {
  status?: number;
  user?: PageUser | null;
  /** CSRF token for the sign-out button in the header. */
  csrf?: string;
  headers?: Record<string, string>;
}

function header(opts: PageOptions): SafeHtml {
  const account = opts.user
    ? html`<div class="account"><span>@${opts.user.username}</span>
        <form method="post" action="/users/sign_out"><input type="hidden" name="authenticity_token" value="${opts.csrf ?? ''}">
        <button class="link" type="submit">Sign out</button></form></div>`
    : '';
  return html`<header class="top"><a class="brand" href="/user_settings/applications">Labwright</a>${account}</header>`;
}

export function layout(title: string, body: SafeHtml, opts: PageOptions = {}): SafeHtml {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Labwright</title>
<link rel="stylesheet" href="/-/labwright.css">
</head><body>${header(opts)}<main>${body}</main></body></html>`;
}

export function sendPage(reply: FastifyReply, title: string, body: SafeHtml, opts: PageOptions = {}): FastifyReply {
  reply.code(opts.status ?? 200).headers(Object.assign({}, PAGE_HEADERS, { ...(opts.headers ?? {}) })).type('text/html; charset=utf-8');
  return reply.send(layout(title, body, opts).value);
}

/** A plain error page (no redirect anywhere). */
export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string, opts: PageOptions = {}): FastifyReply {
  return sendPage(reply, title, html`<section class="card"><h1>${title}</h1><p class="error">${message}</p></section>`, Object.assign({}, opts, { status }));
}

/** 303 See Other, so that a POSTed form is never re-sent to the target (RFC 9700 §4.12). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).headers({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).header('Location', location).send();
}

export const STYLESHEET = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f6f7f9;color:#1f2328}
.top{display:flex;justify-content:space-between;align-items:center;padding:.75rem 1rem;background:#fff;border-bottom:1px solid #dfe2e6}
.brand{font-weight:700;color:#4b2aa8;text-decoration:none}
.account{display:flex;gap:.75rem;align-items:center;font-size:.9rem;color:#57606a}
.account form{margin:0}
main{max-width:36rem;margin:1.5rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dfe2e6;border-radius:10px;padding:1.25rem 1.25rem 1.5rem;margin-bottom:1rem}
h1{font-size:1.35rem;margin:0 0 .75rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password],textarea{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid #c9ced4;border-radius:6px}
textarea{min-height:5rem}
.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.35rem 0}
.check input{margin-top:.35rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}
button{font:inherit;padding:.6rem 1.1rem;border-radius:6px;border:1px solid #c9ced4;background:#fff;cursor:pointer}
button.primary{background:#4b2aa8;border-color:#4b2aa8;color:#fff}
button.danger{color:#b3261e;border-color:#e0b4b0}
button.link{border:0;background:none;padding:0;color:#4b2aa8;text-decoration:underline}
.error{color:#b3261e}
.notice{background:#fff8e5;border:1px solid #f0d48a;border-radius:6px;padding:.6rem .8rem}
.muted{color:#57606a;font-size:.9rem}
ul.scopes{padding-left:1.1rem}
ul.scopes li{margin:.3rem 0}
code,.code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#f0f1f3;padding:.1rem .35rem;border-radius:4px;word-break:break-all}
.nowrap{white-space:nowrap;word-break:normal}
.usercode{font-size:1.6rem;letter-spacing:.15em;text-align:center;text-transform:uppercase}
table{width:100%;border-collapse:collapse}
td,th{text-align:left;padding:.4rem .25rem;border-top:1px solid #eceef1;vertical-align:top}
.app{border-top:1px solid #eceef1;padding:.75rem 0}
.app:first-child{border-top:0}
`;
