// Runs the official OpenAI Node SDK against Causeway, as a client application would, and
// prints one JSON object with the outcome of each case for cmd/causeway/nodesdk_test.go to
// assert on. Everything it needs comes from the environment.
import OpenAI from 'openai';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

// client is the SDK as the README shows it: the provider's key as the API key, Causeway's
// key, the provider and its host in default headers.
const client = (gatewayKey, host) =>
  new OpenAI({
    apiKey: 'sk-provider-key',
    baseURL: env('GATEWAY_URL'),
    maxRetries: 0,
    timeout: 20_000,
    defaultHeaders: {
      'x-gateway-api-key': gatewayKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': host,
    },
  });

const classes = ['BadRequestError', 'AuthenticationError', 'NotFoundError', 'RateLimitError', 'APIError'];

// failure describes an error as the SDK typed it.
const failure = (err) => {
  const out = { ok: false, name: err?.constructor?.name, message: err?.message, is: {} };
  for (const c of classes) out.is[c] = err instanceof OpenAI[c];
  if (err instanceof OpenAI.APIError) {
    Object.assign(out, {
      status: err.status,
      type: err.type ?? null,
      code: err.code ?? null,
      param: err.param ?? null,
      error: err.error ?? null,
      source: err.headers?.get?.('x-gateway-error-source') ?? null,
    });
  }
  return out;
};

const run = async (fn) => {
  try {
    return { ok: true, ...(await fn()) };
  } catch (err) {
    return failure(err);
  }
};

const host = env('PROVIDER_HOST');
const sdk = client(env('GATEWAY_KEY'), host);
const messages = [{ role: 'user', content: 'Say hello' }];
const results = {};

results.chat = await run(async () => {
  const res = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages });
  return { content: res.choices[0].message.content, total_tokens: res.usage?.total_tokens ?? 0 };
});

results.stream = await run(async () => {
  const stream = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
  let chunks = 0;
  let content = '';
  for await (const chunk of stream) {
    chunks++;
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  return { chunks, content };
});

results.embeddings = await run(async () => {
  const res = await sdk.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
  return { count: res.data.length, dims: res.data[0].embedding.length };
});

results.validation = await run(() => sdk.chat.completions.create({ model: 'gpt-4o-mini' }));

results.provider404 = await run(() =>
  client(env('GATEWAY_KEY'), env('PROVIDER_404_HOST')).chat.completions.create({ model: 'gpt-4o-mini', messages }),
);

results.auth = await run(() => client('not-a-gateway-key', host).chat.completions.create({ model: 'gpt-4o-mini', messages }));

// One request a minute: the second is refused (a third, should the first two straddle a
// minute's end).
const limited = client(env('LIMITED_KEY'), host);
for (let i = 0; i < 3; i++) {
  results.ratelimit = await run(() => limited.chat.completions.create({ model: 'gpt-4o-mini', messages }));
  if (!results.ratelimit.ok) break;
}

process.stdout.write(JSON.stringify(results));
