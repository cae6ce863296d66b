import { Type, type TObject } from '@sinclair/typebox';
import { Discriminated, Name40, Opt, Strict, StringEnum } from './common.js';

export const SIP_TRUNK = 'byo-sip-trunk';
export const WEBHOOK = 'webhook';
/** Vendor names of API-key credentials: lowercase words joined by `-` or `.`. */
export const VENDOR_PATTERN = '^[a-z][a-z0-9]*([.-][a-z0-9]+)*$';

// Secret fields carry no maxLength: PATCH validates the merged document, whose secrets are sealed.
const Secret = Type.String({ minLength: 1, description: 'Secret: sealed at rest, never returned' });
const HeaderName = Type.String({ minLength: 1, maxLength: 256 });

const Gateway = Strict({
  ip: Type.String({
    minLength: 1,
    maxLength: 253,
    description: 'IPv4 or IPv6 address, or a hostname (outbound-only gateways)',
  }),
  port: Opt(Type.Integer({ minimum: 1, maximum: 65535, default: 5060 })),
  netmask: Opt(Type.Integer({ minimum: 24, maximum: 32, default: 32 })),
  inboundEnabled: Opt(Type.Boolean({ default: true })),
  outboundEnabled: Opt(Type.Boolean({ default: true })),
  outboundProtocol: Opt(StringEnum(['udp', 'tcp', 'tls', 'tls/srtp'] as const, { default: 'udp' })),
});

/**
 * A SIP or SIPS URI naming a host (RFC 3261 §19.1): optional user part, a hostname, IPv4 or
 * bracketed IPv6 host, optional port and `;name=value` parameters, no `?headers`. The call layer
 * parses it again with the SIP stack's URI parser before using it.
 */
export const SIP_HOST_URI_PATTERN =
  '^[sS][iI][pP][sS]?:(?:[^@\\s<>"?]+@)?(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?(?:;[A-Za-z0-9\\-_.!~*\'()\\[\\]/:&+$%=]+)*$';

export const SipTrunkCredential = Strict({
  provider: Type.Literal(SIP_TRUNK),
  name: Opt(Name40),
  gateways: Type.Array(Gateway, { minItems: 1 }),
  outboundLeadingPlusEnabled: Opt(Type.Boolean()),
  outboundProxy: Opt(
    Type.String({
      minLength: 5,
      maxLength: 512,
      pattern: SIP_HOST_URI_PATTERN,
      description:
        'Parla field: the outbound proxy (RFC 3261 §8.1.2) every INVITE and REGISTER is sent through, as a SIP URI such as sip:proxy.example.com:5070;transport=tcp. The Request-URI still names the gateway; the proxy is a preloaded Route.',
    }),
  ),
  outboundAuthenticationPlan: Opt(
    Strict({
      authUsername: Opt(Type.String({ maxLength: 256 })),
      authPassword: Opt(Secret),
      sipRegisterPlan: Opt(
        Strict({
          domain: Opt(Type.String({ maxLength: 253 })),
          username: Opt(Type.String({ maxLength: 256 })),
          realm: Opt(Type.String({ maxLength: 253 })),
        }),
      ),
    }),
  ),
  sipTrunkingProvider: Opt(Type.String({ maxLength: 100 })),
});

const BearerPlan = Strict({
  type: Type.Literal('bearer'),
  token: Secret,
  headerName: Opt(Type.String({ ...HeaderName, default: 'Authorization' })),
  bearerPrefixEnabled: Opt(Type.Boolean({ default: true })),
});

const OAuth2Plan = Strict({
  type: Type.Literal('oauth2'),
  url: Type.String({ format: 'uri', maxLength: 2048 }),
  clientId: Type.String({ minLength: 1, maxLength: 1000 }),
  clientSecret: Secret,
  scope: Opt(Type.String({ maxLength: 1000 })),
});

const HmacPlan = Strict({
  type: Type.Literal('hmac'),
  secretKey: Secret,
  algorithm: StringEnum(['sha256', 'sha512', 'sha1'] as const),
  signatureHeader: Opt(Type.String({ ...HeaderName, default: 'x-signature' })),
  timestampHeader: Opt(Type.String({ ...HeaderName, default: 'x-timestamp' })),
  signaturePrefix: Opt(Type.String({ maxLength: 100 })),
  includeTimestamp: Opt(Type.Boolean({ default: true })),
  payloadFormat: Opt(Type.String({ maxLength: 1000, default: '{timestamp}.{body}' })),
  messageIdHeader: Opt(HeaderName),
  signatureEncoding: Opt(StringEnum(['hex', 'base64'] as const, { default: 'hex' })),
  secretIsBase64: Opt(Type.Boolean({ default: false })),
});

export const WebhookCredential = Strict({
  provider: Type.Literal(WEBHOOK),
  name: Opt(Name40),
  authenticationPlan: Discriminated('type', [BearerPlan, OAuth2Plan, HmacPlan]),
});

/** An absolute http(s) or ws(s) URL with a host. */
const EndpointUrl = (description: string) =>
  Type.String({
    format: 'uri',
    pattern: '^(?:[hH][tT][tT][pP][sS]?|[wW][sS][sS]?)://[^\\s/?#@]+',
    maxLength: 2048,
    description,
  });

export const ApiKeyCredential = Strict({
  provider: Type.String({ pattern: VENDOR_PATTERN, maxLength: 60 }),
  name: Opt(Name40),
  apiKey: Secret,
  baseUrl: Opt(
    EndpointUrl(
      'Endpoint of an OpenAI-compatible vendor (openai and the like), e.g. a self-hosted server',
    ),
  ),
  apiUrl: Opt(EndpointUrl('Endpoint of a self-hosted Deepgram, e.g. ws://deepgram:8080')),
});

/** The schema of a credential kind (create body, and the merged document on PATCH). */
export function credentialSchema(provider: string): TObject {
  switch (provider) {
    case SIP_TRUNK:
      return SipTrunkCredential;
    case WEBHOOK:
      return WebhookCredential;
    default:
      return ApiKeyCredential;
  }
}

/**
 * Route-level body: only `provider` is checked here, since it picks the kind; the route then
 * validates the whole body against `credentialSchema(provider)`.
 */
export const CredentialBody = Type.Object(
  { provider: Type.String({ pattern: VENDOR_PATTERN, maxLength: 60 }) },
  {
    additionalProperties: true,
    description: `A ${SIP_TRUNK} credential, a ${WEBHOOK} credential, or {provider, apiKey, name} for any other vendor`,
  },
);

export const CredentialPatchBody = Type.Object(
  { provider: Opt(Type.String({ maxLength: 60 })) },
  { additionalProperties: true, description: 'Fields of the credential kind to change' },
);
