package redact

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// tok describes a vendor token that starts with a fixed literal: the literal
// routes the keyword pass to it, and the anchored pattern checks the rest.
// Formats follow the vendors' documentation (and gitleaks' rule set where
// the vendor documents none).
type tok struct {
	id, desc string
	kw       []string // literals a token starts with (exact case)
	re       string   // anchored at the literal
	ent      float64  // minimum Shannon entropy of the token, if any
	check    func(string) bool
	group    int
	keepPH   bool // the format itself has runs the placeholder check rejects
	maxLen   int  // longest token (default 1024 bytes)
}

var vendorTokens = []tok{
	// AI providers: the keys most often pasted into agent sessions.
	{id: "openai-api-key", desc: "OpenAI project, service-account or admin key", kw: []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"},
		re: `sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{32,}`, ent: 3.5},
	{id: "openai-api-key", desc: "OpenAI legacy user key", kw: []string{"sk-"},
		re: `sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}`},
	{id: "sk-api-key", desc: "sk- API key (OpenAI-compatible providers: DeepSeek, Moonshot, ...)", kw: []string{"sk-"},
		re: `sk-[A-Za-z0-9]{32,}`, ent: 3.3, check: mixedOrHex},
	{id: "anthropic-api-key", desc: "Anthropic API, admin or OAuth key", kw: []string{"sk-ant-"},
		re: `sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}`, ent: 3.5},
	{id: "openrouter-api-key", desc: "OpenRouter key", kw: []string{"sk-or-v1-"}, re: `sk-or-v1-[a-f0-9]{64}`},
	{id: "langfuse-secret-key", desc: "Langfuse secret key", kw: []string{"sk-lf-"}, re: `sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`},
	{id: "huggingface-token", desc: "Hugging Face user or org token", kw: []string{"hf_", "api_org_"},
		re: `(?:hf|api_org)_[A-Za-z0-9]{34,40}`, ent: 3.2, check: hasLetterMix},
	{id: "groq-api-key", desc: "Groq key", kw: []string{"gsk_"}, re: `gsk_[A-Za-z0-9]{48,56}`, ent: 3.5},
	{id: "replicate-api-token", desc: "Replicate token", kw: []string{"r8_"}, re: `r8_[A-Za-z0-9]{37}`, ent: 3.5},
	{id: "perplexity-api-key", desc: "Perplexity key", kw: []string{"pplx-"}, re: `pplx-[A-Za-z0-9]{48}`, ent: 3.5},
	{id: "xai-api-key", desc: "xAI key", kw: []string{"xai-"}, re: `xai-[A-Za-z0-9]{70,90}`, ent: 3.5},
	{id: "cerebras-api-key", desc: "Cerebras key", kw: []string{"csk-"}, re: `csk-[a-z0-9]{48}`, ent: 3.5},
	{id: "fireworks-api-key", desc: "Fireworks AI key", kw: []string{"fw_"}, re: `fw_[A-Za-z0-9]{24,}`, ent: 3.5, check: hasLetterMix},
	{id: "langsmith-api-key", desc: "LangSmith key", kw: []string{"lsv2_"}, re: `lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}`},
	{id: "llamacloud-api-key", desc: "LlamaCloud key", kw: []string{"llx-"}, re: `llx-[A-Za-z0-9]{40,56}`, ent: 3.5},
	{id: "tavily-api-key", desc: "Tavily key", kw: []string{"tvly-"}, re: `tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}`},
	{id: "firecrawl-api-key", desc: "Firecrawl key", kw: []string{"fc-"}, re: `fc-[a-f0-9]{32}`},
	{id: "e2b-api-key", desc: "E2B key", kw: []string{"e2b_"}, re: `e2b_[a-f0-9]{40}`},
	{id: "pinecone-api-key", desc: "Pinecone key", kw: []string{"pcsk_"}, re: `pcsk_[A-Za-z0-9_]{40,}`},

	// Source hosting and package registries.
	{id: "github-token", desc: "GitHub personal, OAuth, user-to-server, server-to-server or refresh token (CRC32 checked)",
		kw: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: `gh[pousr]_[A-Za-z0-9]{36}`,
		check: func(s string) bool { return validCRC32Base62(s[4:]) }},
	{id: "github-fine-grained-pat", desc: "GitHub fine-grained personal access token", kw: []string{"github_pat_"},
		re: `github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`},
	{id: "gitlab-token", desc: "GitLab personal, deploy, runner, trigger, OAuth, feed or agent token",
		kw: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "gloas-", "glimt-", "glft-", "glagent-", "glffct-", "glwt-"},
		re: `gl(?:pat|dt|rt|ptt|soat|cbt|oas|imt|ft|agent|ffct|wt)-[A-Za-z0-9_.-]{20,}`, ent: 3.2},
	{id: "gitlab-runner-registration-token", desc: "GitLab runner registration token", kw: []string{"GR1348941"},
		re: `GR1348941[A-Za-z0-9_-]{20}`},
	{id: "npm-token", desc: "npm access token (CRC32 checked)", kw: []string{"npm_"}, re: `npm_[A-Za-z0-9]{36}`,
		check: func(s string) bool { return validCRC32Base62(s[4:]) }},
	{id: "pypi-token", desc: "PyPI upload token", kw: []string{"pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"},
		re: `pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}`},
	{id: "rubygems-api-key", desc: "RubyGems key", kw: []string{"rubygems_"}, re: `rubygems_[a-f0-9]{48}`},
	{id: "clojars-api-token", desc: "Clojars token", kw: []string{"CLOJARS_"}, re: `CLOJARS_[a-z0-9]{60}`},
	{id: "dockerhub-token", desc: "Docker Hub personal or organisation access token", kw: []string{"dckr_pat_", "dckr_oat_"},
		re: `dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`},
	{id: "packagist-token", desc: "Private Packagist token", kw: []string{"packagist_"}, re: `packagist_[ou][ru]t_[a-f0-9]{68}`},
	{id: "bitbucket-app-password", desc: "Bitbucket app password / API token", kw: []string{"ATBB"}, re: `ATBB[A-Za-z0-9_=.-]{28,}`, ent: 3.5},
	{id: "atlassian-api-token", desc: "Atlassian (Jira, Confluence) API token", kw: []string{"ATATT3", "ATCTT3"},
		re: `AT[AC]TT3[A-Za-z0-9_=-]{150,}`},
	{id: "jfrog-token", desc: "JFrog API key or reference token", kw: []string{"AKCp", "cmVmdGtuOjAxOj"},
		re: `(?:AKCp[A-Za-z0-9]{69}|cmVmdGtuOjAxOj[A-Za-z0-9]{40,})`},
	{id: "buildkite-token", desc: "Buildkite user token", kw: []string{"bkua_"}, re: `bkua_[a-f0-9]{40}`},
	{id: "sonar-token", desc: "SonarQube/SonarCloud token", kw: []string{"squ_", "sqp_", "sqa_"}, re: `sq[upa]_[a-f0-9]{40}`},
	{id: "octopus-deploy-api-key", desc: "Octopus Deploy key", kw: []string{"API-"}, re: `API-[A-Z0-9]{26}`, ent: 3.5},

	// Cloud providers.
	{id: "aws-access-key-id", desc: "AWS access key id", kw: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		re: `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`, ent: 3.0},
	{id: "aws-session-token", desc: "AWS STS session token", kw: []string{"IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"},
		re: `(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/]{100,}={0,2}`},
	{id: "aws-bedrock-api-key", desc: "Amazon Bedrock long-term API key", kw: []string{"ABSK"}, re: `ABSK[A-Za-z0-9+/]{100,}={0,2}`},
	{id: "aws-bedrock-api-key", desc: "Amazon Bedrock short-term API key", kw: []string{"bedrock-api-key-"},
		re: `bedrock-api-key-[A-Za-z0-9+/]{20,}={0,2}`, check: func(s string) bool {
			return strings.HasPrefix(decodeB64Prefix(s[len("bedrock-api-key-"):]), "bedrock.amazonaws.com")
		}},
	{id: "gcp-api-key", desc: "Google Cloud / Gemini API key", kw: []string{"AIza"}, re: `AIza[A-Za-z0-9_-]{35}`, ent: 3.5},
	{id: "google-oauth-client-secret", desc: "Google OAuth client secret", kw: []string{"GOCSPX-"}, re: `GOCSPX-[A-Za-z0-9_-]{28}`},
	{id: "google-oauth-token", desc: "Google OAuth access token", kw: []string{"ya29."}, re: `ya29\.[A-Za-z0-9_-]{30,}`, ent: 3.5},
	{id: "google-refresh-token", desc: "Google OAuth refresh token", kw: []string{"1//0"}, re: `1//0[A-Za-z0-9_-]{40,}`, ent: 3.5},
	{id: "digitalocean-token", desc: "DigitalOcean personal, OAuth or refresh token", kw: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
		re: `do[opr]_v1_[a-f0-9]{64}`},
	{id: "alibaba-access-key-id", desc: "Alibaba Cloud AccessKey id", kw: []string{"LTAI"}, re: `LTAI[A-Za-z0-9]{20}`, ent: 3.5},
	{id: "tencent-secret-id", desc: "Tencent Cloud SecretId", kw: []string{"AKID"}, re: `AKID[A-Za-z0-9]{32}`, ent: 3.5},
	{id: "yandex-token", desc: "Yandex Cloud API key or IAM token", kw: []string{"AQVN", "t1."},
		re: `(?:AQVN[A-Za-z0-9_-]{35,38}|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2})`, ent: 3.5},
	{id: "cloudflare-origin-ca-key", desc: "Cloudflare Origin CA key", kw: []string{"v1.0-"}, re: `v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`},
	{id: "flyio-token", desc: "Fly.io access token", kw: []string{"fo1_", "fm1_", "fm1a_", "fm1r_", "fm2_"},
		re: `(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})`},
	{id: "heroku-api-key", desc: "Heroku API key (v2)", kw: []string{"HRKU-"}, re: `HRKU-[A-Za-z0-9_-]{58,64}`},
	{id: "vault-token", desc: "HashiCorp Vault service, batch or recovery token", kw: []string{"hvs.", "hvb.", "hvr."},
		re: `hv[sbr]\.[A-Za-z0-9_-]{24,}`, ent: 3.5},
	{id: "doppler-token", desc: "Doppler personal, service (with its config: dp.st.prd.…), service-account, CLI, SCIM or audit token", kw: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."},
		re: `dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,32}\.)?[A-Za-z0-9]{40,44}`},
	{id: "pulumi-token", desc: "Pulumi access token", kw: []string{"pul-"}, re: `pul-[a-f0-9]{40}`},
	{id: "supabase-token", desc: "Supabase access or secret key", kw: []string{"sbp_", "sb_secret_"},
		re: `(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,})`},
	{id: "neon-api-key", desc: "Neon API key", kw: []string{"napi_"}, re: `napi_[a-z0-9]{64}`},
	{id: "render-api-key", desc: "Render API key", kw: []string{"rnd_"}, re: `rnd_[A-Za-z0-9]{32}`, ent: 3.5},
	{id: "netlify-token", desc: "Netlify personal access token", kw: []string{"nfp_"}, re: `nfp_[A-Za-z0-9]{36}`, ent: 3.5},
	{id: "planetscale-token", desc: "PlanetScale password, service or OAuth token", kw: []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"},
		re: `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}`},
	{id: "tailscale-key", desc: "Tailscale auth, API or OAuth key", kw: []string{"tskey-"}, re: `tskey-[a-z]+-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}`},
	{id: "scalingo-token", desc: "Scalingo API token", kw: []string{"tk-us-"}, re: `tk-us-[A-Za-z0-9_-]{48}`},
	{id: "defined-networking-key", desc: "Defined Networking API key", kw: []string{"dnkey-"}, re: `dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}`},
	{id: "dynatrace-token", desc: "Dynatrace API token", kw: []string{"dt0c01."}, re: `dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}`},

	// Messaging, payments, SaaS.
	{id: "slack-token", desc: "Slack bot, user, app, workspace or configuration token", kw: []string{"xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.xox", "xapp-"},
		re: `(?:xoxe\.xox[bp]-[0-9]-[A-Z0-9]{140,180}|(?:xox[abposre]|xapp)-[0-9A-Za-z-]{20,})`, check: slackShape},
	{id: "slack-webhook", desc: "Slack incoming webhook, workflow or trigger URL", kw: []string{"hooks.slack.com/"},
		re: `hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{20,})`, group: 1},
	{id: "discord-webhook", desc: "Discord webhook URL", kw: []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"},
		re: `discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{60,70})`, group: 1},
	{id: "telegram-bot-token", desc: "Telegram bot token in a Bot API URL", kw: []string{"api.telegram.org/bot"},
		re: `api\.telegram\.org/bot([0-9]{5,16}:[A-Za-z0-9_-]{34,36})`, group: 1},
	{id: "stripe-api-key", desc: "Stripe secret or restricted key", kw: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
		re: `[sr]k_(?:live|test|prod)_[A-Za-z0-9]{20,}`, ent: 3.3},
	{id: "stripe-webhook-secret", desc: "Stripe (and Svix) webhook signing secret", kw: []string{"whsec_"}, re: `whsec_[A-Za-z0-9+/=]{24,}`},
	{id: "twilio-api-key", desc: "Twilio API key SID", kw: []string{"SK"}, re: `SK[0-9a-fA-F]{32}`, ent: 3.0},
	{id: "sendgrid-api-key", desc: "SendGrid key", kw: []string{"SG."}, re: `SG\.[A-Za-z0-9_=-]{20,24}\.[A-Za-z0-9_=-]{39,50}`},
	{id: "brevo-api-key", desc: "Brevo (Sendinblue) key", kw: []string{"xkeysib-", "xsmtpsib-"}, re: `x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}`},
	{id: "mailgun-api-key", desc: "Mailgun private key", kw: []string{"key-"}, re: `key-[0-9a-f]{32}`, ent: 3.0},
	{id: "resend-api-key", desc: "Resend key", kw: []string{"re_"}, re: `re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}`},
	{id: "shopify-token", desc: "Shopify access token, shared secret, custom or private app token", kw: []string{"shpat_", "shpss_", "shpca_", "shppa_"},
		re: `shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`},
	{id: "square-token", desc: "Square access token or OAuth secret", kw: []string{"EAAA", "sq0csp-", "sq0atp-"},
		re: `(?:EAAA[A-Za-z0-9_-]{60}|sq0csp-[A-Za-z0-9_-]{43}|sq0atp-[A-Za-z0-9_-]{22})`, ent: 3.5},
	{id: "facebook-access-token", desc: "Facebook / Meta access token", kw: []string{"EAAC", "EAAM", "EAAG"}, re: `EAA[CMG][A-Za-z0-9]{90,}`, ent: 3.5},
	{id: "shippo-api-token", desc: "Shippo token", kw: []string{"shippo_live_", "shippo_test_"}, re: `shippo_(?:live|test)_[a-fA-F0-9]{40}`},
	{id: "duffel-api-token", desc: "Duffel token", kw: []string{"duffel_test_", "duffel_live_"}, re: `duffel_(?:test|live)_[A-Za-z0-9_=-]{43}`},
	{id: "easypost-api-token", desc: "EasyPost key", kw: []string{"EZAK", "EZTK"}, re: `EZ[AT]K[A-Za-z0-9]{54}`},
	{id: "flutterwave-key", desc: "Flutterwave secret or encryption key", kw: []string{"FLWSECK", "FLWPUBK_TEST-"},
		re: `FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?`},
	{id: "plaid-access-token", desc: "Plaid access token", kw: []string{"access-sandbox-", "access-development-", "access-production-"},
		re: `access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`},
	{id: "linear-api-key", desc: "Linear API key or OAuth token", kw: []string{"lin_api_", "lin_oauth_"},
		re: `(?:lin_api_[A-Za-z0-9]{40}|lin_oauth_[a-f0-9]{64})`},
	{id: "notion-token", desc: "Notion integration token", kw: []string{"ntn_", "secret_"}, re: `(?:ntn_[0-9]{11}[A-Za-z0-9]{32,35}|secret_[A-Za-z0-9]{43})`, ent: 3.5, check: hasLetterMix},
	{id: "airtable-token", desc: "Airtable personal access token", kw: []string{"pat"}, re: `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`},
	{id: "figma-token", desc: "Figma personal access token", kw: []string{"figd_"}, re: `figd_[A-Za-z0-9_-]{40}`},
	{id: "postman-api-key", desc: "Postman API key", kw: []string{"PMAK-"}, re: `PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`},
	{id: "grafana-token", desc: "Grafana service-account, Cloud or legacy API token", kw: []string{"glsa_", "glc_", "eyJrIjoi"},
		re: `(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2})`},
	{id: "sentry-token", desc: "Sentry user or organisation auth token", kw: []string{"sntryu_", "sntrys_"},
		re: `(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=]{40,}_[A-Za-z0-9+/]{43})`},
	{id: "new-relic-key", desc: "New Relic user, browser, insights or ingest key", kw: []string{"NRAK-", "NRJS-", "NRII-", "NRAA-", "NRRA-"},
		re: `(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9_-]{32}|NRAA-[a-f0-9]{27}|NRRA-[a-f0-9]{42})`},
	{id: "databricks-token", desc: "Databricks personal access token", kw: []string{"dapi"}, re: `dapi[a-f0-9]{32}(?:-[0-9])?`},
	{id: "age-secret-key", desc: "age encryption secret key", kw: []string{"AGE-SECRET-KEY-1"},
		re: `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
	{id: "onepassword-secret-key", desc: "1Password account secret key or service-account token", kw: []string{"A3-", "ops_eyJ"},
		re: `(?:A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}|ops_eyJ[A-Za-z0-9+/]{250,}={0,3})`},
	{id: "mapbox-secret-token", desc: "Mapbox secret token", kw: []string{"sk.eyJ"}, re: `sk\.eyJ[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{20,}`},
	{id: "adafruit-io-key", desc: "Adafruit IO key", kw: []string{"aio_"}, re: `aio_[A-Za-z0-9]{28}`, ent: 3.5},
	{id: "prefect-api-key", desc: "Prefect API key", kw: []string{"pnu_"}, re: `pnu_[A-Za-z0-9]{36}`},
	{id: "readme-api-key", desc: "ReadMe API key", kw: []string{"rdme_"}, re: `rdme_[a-z0-9]{70}`},
	{id: "harness-token", desc: "Harness personal or service-account token", kw: []string{"pat.", "sat."},
		re: `(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`},
	{id: "infracost-api-key", desc: "Infracost key", kw: []string{"ico-"}, re: `ico-[A-Za-z0-9]{32}`, ent: 3.5},
	{id: "settlemint-token", desc: "SettleMint access token", kw: []string{"sm_pat_", "sm_aat_", "sm_sat_"}, re: `sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}`},
	{id: "frameio-api-token", desc: "Frame.io token", kw: []string{"fio-u-"}, re: `fio-u-[A-Za-z0-9_=-]{64}`},
	{id: "typeform-api-token", desc: "Typeform token", kw: []string{"tfp_"}, re: `tfp_[A-Za-z0-9_.=-]{59}`},
	{id: "contentful-token", desc: "Contentful personal access token", kw: []string{"CFPAT-"}, re: `CFPAT-[A-Za-z0-9_-]{43}`},
	{id: "segment-token", desc: "Segment public API token", kw: []string{"sgp_"}, re: `sgp_[A-Za-z0-9]{64}`},
	{id: "twitter-bearer-token", desc: "X/Twitter app bearer token", kw: []string{"AAAAAAAAAAAAAAAAAAAAA"},
		re: `A{21,22}[A-Za-z0-9%]{50,}`, keepPH: true, check: func(s string) bool { return !isPlaceholder(strings.TrimLeft(s, "A")) }},
	{id: "firebase-cloud-messaging-key", desc: "Firebase Cloud Messaging server key", kw: []string{"AAAA"},
		re: `AAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{140}`},
	{id: "jwt", desc: "JSON Web Token (signed or encrypted)", kw: []string{"eyJ"},
		re: `eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)?`, check: validJWT,
		keepPH: true, maxLen: 1 << 16},
	{id: "jwt", desc: "base64-encoded JSON Web Token", kw: []string{"ZXlK"}, re: `ZXlK[A-Za-z0-9+/]{40,}={0,2}`, check: base64JWT,
		keepPH: true, maxLen: 1 << 16},
	{id: "sourcegraph-token", desc: "Sourcegraph access token", kw: []string{"sgp_"},
		re: `sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}`},
	{id: "openshift-token", desc: "OpenShift user token", kw: []string{"sha256~"}, re: `sha256~[A-Za-z0-9_-]{43}`},
	{id: "intra42-client-secret", desc: "42 Intra client secret", kw: []string{"s-s4t2"}, re: `s-s4t2(?:ud|af)-[a-f0-9]{64}`},
	{id: "microsoft-teams-webhook", desc: "Microsoft Teams incoming webhook URL", kw: []string{".webhook.office.com/webhookb2/", "outlook.office.com/webhook/"},
		re: `(?:\.webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/([A-Za-z0-9@/_-]{40,})`, group: 1},
}

// win describes a token recognised by a literal inside or near it: the
// pattern runs over a window around the literal.
type win struct {
	id, desc      string
	kw            []string
	caseSensitive bool
	re            string
	group         int
	before, after int
	ent           float64
}

var windowTokens = []win{
	{id: "bundler-credentials", desc: "gem server credentials in a Bundler variable (BUNDLE_HOST__NAME=user:password)", kw: []string{"BUNDLE_"}, caseSensitive: true,
		re: `BUNDLE_[A-Z0-9_]*__[A-Z]+['"]?\s*[:=]\s*['"]?([A-Za-z0-9._%+-]+:[^\s'";&]+)`, group: 1, before: 0, after: 200},
	{id: "facebook-access-token", desc: "Facebook app access token (app id|secret)", kw: []string{"facebook", "fb_", "graph.facebook"},
		re: `[0-9]{13,17}(?:\||%7C)[A-Za-z0-9_-]{27,}`, before: 100, after: 300},
	{id: "twilio-auth-token", desc: "Twilio auth token beside its account SID", kw: []string{"twilio"},
		re: `AC[0-9a-f]{32}['"]?\s*[,:]\s*['"]?([0-9a-f]{32})`, group: 1, before: 400, after: 600},
}

// mid describes a token recognised by a literal at a known place inside
// it: the token's start is found from the literal, and the pattern is
// anchored there.
type mid struct {
	id, desc string
	kw       string // exact case
	re       string
	back     int  // the literal starts this many bytes into the token
	digits   bool // or: the token starts with the run of digits before the literal
	ent      float64
}

var midTokens = []mid{
	{id: "hashicorp-tf-token", desc: "HashiCorp Terraform Cloud / Enterprise token", kw: ".atlasv1.",
		re: `[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}`, back: 14},
	{id: "azure-ad-client-secret", desc: "Microsoft Entra ID (Azure AD) client secret", kw: "Q~",
		re: `[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`, back: 4, ent: 3.0},
	{id: "telegram-bot-token", desc: "Telegram bot token", kw: ":AA",
		re: `[0-9]{5,16}:AA[A-Za-z0-9_-]{32,34}`, digits: true},
	{id: "mailchimp-api-key", desc: "Mailchimp API key", kw: "-us", re: `[0-9a-f]{32}-us[0-9]{1,2}`, back: 32},
	{id: "azure-devops-pat", desc: "Azure DevOps personal access token", kw: "AZDO",
		re: `[A-Za-z0-9]{52}JQQJ9[0-9]{2}[A-Za-z0-9]{17}AZDO[A-Za-z0-9]{4}`, back: 76},
	{id: "deepl-api-key", desc: "DeepL API key", kw: ":fx",
		re: `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx`, back: 36},
}

// vendorRules compiles the token tables.
func vendorRules() []*rule {
	var rules []*rule
	for _, t := range vendorTokens {
		r := &rule{
			id: t.id, description: t.desc, keywords: t.kw, caseSensitive: true, prio: prioVendor,
			prefix: lazyCompile(`^` + t.re), group: t.group, maxLen: 1024, minEntropy: t.ent, validate: t.check,
		}
		if t.maxLen > 0 {
			r.maxLen = t.maxLen
		}
		r.keepPlaceholders = t.keepPH
		if t.group > 0 {
			r.noBoundary = true
		}
		if t.id == "openai-api-key" || t.id == "anthropic-api-key" || t.id == "openrouter-api-key" || t.id == "langfuse-secret-key" {
			r.prio = prioVendor + 1 // more specific than sk-api-key
		}
		rules = append(rules, r)
	}
	for _, m := range midTokens {
		back, digits := m.back, m.digits
		rules = append(rules, &rule{
			id: m.id, description: m.desc, keywords: []string{m.kw}, caseSensitive: true, prio: prioVendor,
			prefix: lazyCompile(`^` + m.re), maxLen: 256, minEntropy: m.ent,
			anchor: func(t string, kw int) int {
				if !digits {
					return kw - back
				}
				s := kw
				for s > 0 && kw-s < 16 && t[s-1] >= '0' && t[s-1] <= '9' {
					s--
				}
				return s
			},
		})
	}
	for _, w := range windowTokens {
		rules = append(rules, &rule{
			id: w.id, description: w.desc, keywords: w.kw, caseSensitive: w.caseSensitive, prio: prioVendor,
			window: lazyCompile(w.re), group: w.group, before: w.before, after: w.after, minEntropy: w.ent,
		})
	}
	return rules
}

// mixedOrHex accepts a random-looking key body: lowercase hex, or letters of
// both cases with digits.
func mixedOrHex(s string) bool {
	body := s[strings.IndexByte(s, '-')+1:]
	if allHex(body) {
		return true
	}
	lower, upper, digit, _ := charKinds(body)
	return lower && upper && digit
}

func hasLetterMix(s string) bool {
	body := s[strings.LastIndexByte(s, '_')+1:]
	lower, upper, _, _ := charKinds(body)
	return lower && upper
}

// slackShape rejects look-alikes such as xoxb-your-bot-token: Slack tokens
// carry numeric team and user ids.
func slackShape(s string) bool {
	if strings.HasPrefix(s, "xoxe.") {
		return true
	}
	digits, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			run++
			digits = max(digits, run)
		} else {
			run = 0
		}
	}
	return digits >= 6 && strings.Count(s, "-") >= 2
}

// validJWT checks that the first segment is a JOSE header: base64url JSON
// naming an algorithm.
func validJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 && len(parts) != 5 {
		return false
	}
	hdr, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(hdr, &h) != nil {
		return false
	}
	if _, ok := h["alg"]; !ok {
		if _, ok := h["enc"]; !ok {
			return false
		}
	}
	return len(parts[1]) > 0
}

// decodeB64Prefix decodes as much of a base64 text as decodes cleanly.
func decodeB64Prefix(s string) string {
	s = strings.TrimRight(s, "=")
	s = s[:len(s)/4*4]
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// base64JWT accepts base64 text that decodes to a JSON Web Token.
func base64JWT(s string) bool {
	d := decodeB64Prefix(s)
	end := 0
	for end < len(d) && (isTokenByte(d[end]) && d[end] != '+' && d[end] != '/' && d[end] != '=') {
		end++
	}
	return strings.HasPrefix(d, "eyJ") && validJWT(d[:end])
}
