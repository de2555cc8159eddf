package redact

import (
	"strings"
	"testing"
)

// TestDetect is the detectors' specification: each input, redacted by a
// fresh Redactor, gives exactly the output shown. Inputs that must survive
// are listed with want == "" (unchanged).
func TestDetect(t *testing.T) {
	const pw = tPassword
	tests := []struct {
		name, in, want string
	}{
		// Vendor tokens in text.
		{"github bare", "token is " + tGitHub + ".", "token is [REDACTED:github-token#1]."},
		{"github bad checksum", "ghp_cvbPCbk5Z4VrZQN1n2YBsOkccFy39I3r0il3", ""},
		{"npm", "//registry.npmjs.org/:_authToken=" + tNPM, "//registry.npmjs.org/:_authToken=[REDACTED:npm-token#1]"},
		{"openai in escaped json", `{"text":"key:\n` + tOpenAI + `\nok"}`, `{"text":"key:\n[REDACTED:openai-api-key#1]\nok"}`},
		{"slack", "SLACK_BOT_TOKEN=" + tSlack, "SLACK_BOT_TOKEN=[REDACTED:slack-token#1]"},
		{"slack look-alike", "SLACK_BOT_TOKEN=xoxb-your-bot-token", ""},
		{"stripe", "stripe.api_key = '" + tStripe + "'", "stripe.api_key = '[REDACTED:stripe-api-key#1]'"},
		{"jwt", "id_token: " + tJWT, "id_token: [REDACTED:jwt#1]"},
		{"jwt-shaped garbage", "eyJhbGciOieeeiIsInR5cCI6.eyJzdWIiOiIxMjM0NTY3.abc", ""},
		{"aws pair", "aws_access_key_id = " + tAWSID + "\naws_secret_access_key = " + tAWSSec + "\nregion = us-east-1",
			"aws_access_key_id = [REDACTED:aws-access-key-id#1]\naws_secret_access_key = [REDACTED:aws-secret-access-key#1]\nregion = us-east-1"},
		{"aws example key", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""},
		{"gcp", `genai.configure(api_key="AIzaSyD8Jq2Vx7Lm4Np9Rt3Wz6Yb1Cf5Hk0Gs8e")`, `genai.configure(api_key="[REDACTED:gcp-api-key#1]")`},
		{"azure ad", `ClientSecretCredential(tid, cid, "a1E6Q~IdPn-F2Gq7VGplSZ4U1.4~Wdg_PDncSjw8")`, `ClientSecretCredential(tid, cid, "[REDACTED:azure-ad-client-secret#1]")`},
		{"telegram url", "POST https://api.telegram.org/bot7391046285:AAH4kF9xQ2mN7pR3tV8wY1zB5cD6eG0hJ3k/getUpdates",
			"POST https://api.telegram.org/bot[REDACTED:telegram-bot-token#1]/getUpdates"},
		{"slack webhook", "curl -X POST https://hooks.slack.com/services/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 -d @x",
			"curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook#1] -d @x"},
		{"discord bot", `client.run("MTAxNjIzNDU2Nzg5MDEyMzQ1Ng.GhX2kL.q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2jA8eU1i")`, `client.run("[REDACTED:discord-bot-token#1]")`},
		{"twilio pair", `from twilio.rest import Client` + "\n" + `client = Client("AC0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c", "8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a")`,
			`from twilio.rest import Client` + "\n" + `client = Client("AC0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c", "[REDACTED:twilio-auth-token#1]")`},

		// Assignments in every syntax.
		{"dotenv", "DB_HOST=db\nDB_PASSWORD=" + pw + "\nDB_NAME=app\n", "DB_HOST=db\nDB_PASSWORD=[REDACTED:password#1]\nDB_NAME=app\n"},
		{"dotenv quoted", `SESSION_SECRET="q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2j"`, `SESSION_SECRET="[REDACTED:secret#1]"`},
		{"export", "export API_TOKEN='q8W2xZ0pL4vR7nT1yB6cK3mH'", "export API_TOKEN='[REDACTED:token#1]'"},
		{"yaml", "db:\n  password: \"" + pw + "\"\n  port: 5432\n", "db:\n  password: \"[REDACTED:password#1]\"\n  port: 5432\n"},
		{"yaml unquoted rest of line", "auth:\n  client_secret: q8W2x)Z0pL4(vR7nT1yB6 # rotated\n", "auth:\n  client_secret: [REDACTED:secret#1] # rotated\n"},
		{"yaml block", "data:\n  .dockercfg: |\n    eyJhdXRocyI6eyJodHRwczovL2V4YW1wbGUvdjEvIjp7ImF1dGgiOiJvcGVuc2VzYW1lIn19fQo=\nkind: x\n",
			"data:\n  .dockercfg: |\n    [REDACTED:docker-config#1]\nkind: x\n"},
		{"toml", "[tool.acme]\napi_key = \"q8W2xZ0pL4vR7nT1yB6cK3mH\"\nretries = 5", "[tool.acme]\napi_key = \"[REDACTED:api-key#1]\"\nretries = 5"},
		{"ini", "[db]\npassword = " + pw + "\n", "[db]\npassword = [REDACTED:password#1]\n"},
		{"java properties", "spring.datasource.password=" + pw, "spring.datasource.password=[REDACTED:password#1]"},
		{"json", `{"user": "app", "password": "` + pw + `", "port": 5432}`, `{"user": "app", "password": "[REDACTED:password#1]", "port": 5432}`},
		{"json escaped twice", `{"content": "{\"token\": \"q8W2xZ0pL4vR7nT1yB6cK3mH\"}"}`, `{"content": "{\"token\": \"[REDACTED:token#1]\"}"}`},
		{"python kwarg", `client = Client(api_key="q8W2xZ0pL4vR7nT1yB6cK3mH")`, `client = Client(api_key="[REDACTED:api-key#1]")`},
		{"python dict", `{'PASSWORD': '` + pw + `', 'HOST': 'db'}`, `{'PASSWORD': '[REDACTED:password#1]', 'HOST': 'db'}`},
		{"python environ", `os.environ["STRIPE_KEY"] = "q8W2xZ0pL4vR7nT1yB6cK3mH"`, `os.environ["STRIPE_KEY"] = "[REDACTED:secret-key#1]"`},
		{"go typed", `var authToken string = "q8W2xZ0pL4vR7nT1yB6cK3mH"`, `var authToken string = "[REDACTED:token#1]"`},
		{"go short", `apiKey := "q8W2xZ0pL4vR7nT1yB6cK3mH"`, `apiKey := "[REDACTED:api-key#1]"`},
		{"ts annotated", `const apiKey: string = "q8W2xZ0pL4vR7nT1yB6cK3mH";`, `const apiKey: string = "[REDACTED:api-key#1]";`},
		{"setenv", `System.setProperty("XRAY_TOKEN", "q8W2xZ0pL4vR7nT1yB6cK3mH")`, `System.setProperty("XRAY_TOKEN", "[REDACTED:token#1]")`},
		{"xml element", "<server><password>" + pw + "</password></server>", "<server><password>[REDACTED:password#1]</password></server>"},
		{"xml attribute", `<add key="StorageApiKey" value="q8W2xZ0pL4vR7nT1yB6cK3mH" />`, `<add key="StorageApiKey" value="[REDACTED:api-key#1]" />`},
		{"cli flag", "app --db-password " + pw + " --port 1", "app --db-password [REDACTED:password#1] --port 1"},
		{"cli flag =", "app --api-key=q8W2xZ0pL4vR7nT1yB6cK3mH", "app --api-key=[REDACTED:api-key#1]"},
		{"mysql -p", "mysql -u root -p'" + pw + "' -e 'SHOW DATABASES;'", "mysql -u root -p'[REDACTED:password#1]' -e 'SHOW DATABASES;'"},
		{"docker login -p", "docker login -u ci -p " + pw + " ghcr.io", "docker login -u ci -p [REDACTED:password#1] ghcr.io"},
		{"curl -u", "curl -u api:key-q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2 https://x", "curl -u api:[REDACTED:basic-auth-password#1] https://x"},
		{"netrc", "machine api.github.com\n  login bot\n  password " + pw + "\n", "machine api.github.com\n  login bot\n  password [REDACTED:password#1]\n"},
		{"pgpassword", "PGPASSWORD='" + pw + "' pg_dump -h db app", "PGPASSWORD='[REDACTED:password#1]' pg_dump -h db app"},
		{"ado.net", "Server=tcp:x,1433;User ID=app;Password=" + pw + ";Encrypt=True;", "Server=tcp:x,1433;User ID=app;Password=[REDACTED:password#1];Encrypt=True;"},
		{"azure connection string", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2jA8eU1iO4wQ7rY5tZ2xC9vB6nM3lK0jF8gH1dS4aP7oI2uY5tR8eW3qZ6xC9v==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:secret-key#1];EndpointSuffix=core.windows.net"},
		{"sas sig", "https://acme.blob.core.windows.net/x.csv?sv=2022-11-02&sp=r&sig=q8W2xZ0pL4vR7nT1yB6cK3mH%2F9sD5fG2jA8eU%3D&se=1",
			"https://acme.blob.core.windows.net/x.csv?sv=2022-11-02&sp=r&sig=[REDACTED:signature#1]&se=1"},
		{"query token", "GET /v1/items?access_token=q8W2xZ0pL4vR7nT1yB6cK3mH&page=2", "GET /v1/items?access_token=[REDACTED:token#1]&page=2"},
		{"prose", "my password is " + pw + ", keep it safe", "my password is [REDACTED:password#1], keep it safe"},
		{"login prose", "The admin login is admin / " + pw + " — can you check?", "The admin login is admin / [REDACTED:password#1] — can you check?"},

		// Headers.
		{"bearer header", "Authorization: Bearer q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2j\r\nHost: x", "Authorization: Bearer [REDACTED:authorization#1]\r\nHost: x"},
		{"basic header", `curl -H 'Authorization: Basic YWRtaW46czNjcjN0LXBhc3M='`, `curl -H 'Authorization: Basic [REDACTED:authorization#1]'`},
		{"x-api-key", "x-api-key: q8W2xZ0pL4vR7nT1yB6cK3mH\nx-request-id: 42", "x-api-key: [REDACTED:api-key#1]\nx-request-id: 42"},
		{"python headers", `headers={'Authorization': 'Bearer q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2j'}`, `headers={'Authorization': 'Bearer [REDACTED:authorization#1]'}`},
		{"bare bearer", "sent Bearer q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2j upstream", "sent Bearer [REDACTED:bearer-token#1] upstream"},

		// URLs.
		{"postgres url", "DATABASE_URL=postgres://app:" + pw + "@db:5432/app?sslmode=require", "DATABASE_URL=postgres://app:[REDACTED:url-password#1]@db:5432/app?sslmode=require"},
		{"redis empty user", "redis://:q8W2xZ0pL4vR7n@cache:6379/0", "redis://:[REDACTED:url-password#1]@cache:6379/0"},
		{"git remote", "origin\thttps://bot:" + tGitHub + "@github.com/acme/x.git (fetch)", "origin\thttps://bot:[REDACTED:github-token#1]@github.com/acme/x.git (fetch)"},
		{"url var", "postgresql://app:${DB_PASSWORD}@db:5432/app", ""},
		{"url no password", "postgres://app@localhost:5432/app git@github.com:acme/x.git", ""},

		// Private keys.
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq8W2xZ0pL4vR7nT1yB6cK3mH\n9sD5fG2jA8eU1iO4wQ7rY5tZ2xC9vB6nM3lK0jF8\n-----END RSA PRIVATE KEY-----\n",
			"-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:private-key#1]\n-----END RSA PRIVATE KEY-----\n"},
		{"pem json-escaped", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n", "client_email": "x@y.iam.gserviceaccount.com"}`,
			`{"private_key": "-----BEGIN PRIVATE KEY-----\n[REDACTED:private-key#1]\n-----END PRIVATE KEY-----\n", "client_email": "x@y.iam.gserviceaccount.com"}`},
		{"pem truncated", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n...", "key: -----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED:private-key#1]\n..."},
		{"certificate", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0B\n-----END CERTIFICATE-----", ""},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKC\n-----END PUBLIC KEY-----", ""},

		// Passwords in URLs as people write them, unencoded (issue 17, leak 2).
		{"url password with # / ?", "DATABASE_URL=postgres://admin:Kq7#mZ2p/x?y@db.example.com:5432/app",
			"DATABASE_URL=postgres://admin:[REDACTED:url-password#1]@db.example.com:5432/app"},
		{"url password with ( [ < >", "mysql://root:p(a)ss[w]<o>rd9@10.0.0.1/db", "mysql://root:[REDACTED:url-password#1]@10.0.0.1/db"},
		{"url password with @", "mongodb+srv://app:S3cr@t!x9@cluster0.ab1cd.mongodb.net/db?w=majority",
			"mongodb+srv://app:[REDACTED:url-password#1]@cluster0.ab1cd.mongodb.net/db?w=majority"},
		{"url password percent-encoded reference", "postgres://app:%24%7BDB_PASSWORD%7D@db:5432/x", ""},
		{"url path with a colon is no userinfo", "https://example.com/a:b/c@d", ""},

		// Secret-setting commands: the value is secret whatever its shape.
		{"gh secret set", "gh secret set CODECOV_TOKEN --body 5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13 --repo acme/api",
			"gh secret set CODECOV_TOKEN --body [REDACTED:secret-command#1] --repo acme/api"},
		{"kubectl from-literal", "kubectl create secret generic app --from-literal=deploy-id=5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13 -n prod",
			"kubectl create secret generic app --from-literal=deploy-id=[REDACTED:secret-command#1] -n prod"},
		{"fly secrets set", "fly secrets set SENTRY_DSN_KEY=summer-tiger DB_URL_SUFFIX=x7Kq2mZ9", "fly secrets set SENTRY_DSN_KEY=[REDACTED:secret-command#1] DB_URL_SUFFIX=[REDACTED:secret-command#2]"},
		{"ssm SecureString", "aws ssm put-parameter --name /prod/deploy/id --type SecureString --value 5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13",
			"aws ssm put-parameter --name /prod/deploy/id --type SecureString --value [REDACTED:secret-command#1]"},
		{"ssm String is not a secret", "aws ssm put-parameter --name /prod/deploy/id --type String --value 5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13", ""},
		{"echo into --password-stdin", "echo 9f8e7d6c5b4a39281706 | docker login -u ci --password-stdin ghcr.io", "echo [REDACTED:secret-command#1] | docker login -u ci --password-stdin ghcr.io"},
		{"secret command reference", `gh secret set TOKEN --body "$TOKEN"`, ""},
		{"same uuid as a request id", "curl -H 'X-Request-Id: 5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13' https://api.acme.io", ""},
		{"uuid under a secret name", "HEROKU_API_KEY=5f1c3b2a-9d4e-4c1b-8a7f-2e6d9b0c4a13", "HEROKU_API_KEY=[REDACTED:api-key#1]"},

		// Terraform variables: the label or the sensitive flag says it.
		{"terraform sensitive", "variable \"upload\" {\n  sensitive = true\n  default   = \"c6992a32e9dd574da7af39280b04de03\"\n}",
			"variable \"upload\" {\n  sensitive = true\n  default   = \"[REDACTED:secret#1]\"\n}"},
		{"terraform secret name", "variable \"db_password\" {\n  default = \"" + pw + "\"\n}", "variable \"db_password\" {\n  default = \"[REDACTED:password#1]\"\n}"},
		{"terraform hash", "variable \"token_sha256\" {\n  sensitive = true\n  default   = \"c6992a32e9dd574da7af39280b04de03\"\n}", ""},

		// Values that describe a secret without being one.
		{"hash under a secret name", "password: $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\ntoken: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ""},
		{"expiry under a secret name", "TOKEN_EXPIRES=2026-09-19T00:00:00Z", ""},
		{"typographic quotes", "Résumé → DATADOG_API_KEY=“a850c7cd0aad14fc623e28d9e409a6de”", "Résumé → DATADOG_API_KEY=“[REDACTED:api-key#1]”"},
		{"service-account key id", `{"type": "service_account", "private_key_id": "d687f9f5d0f64914b820c46279128d94e536da81"}`,
			`{"type": "service_account", "private_key_id": "[REDACTED:private-key-id#1]"}`},
		{"words with a number are a password", "PASSWORD=summer_tiger18\nX-Redis-Password: harbor.granite50", "PASSWORD=[REDACTED:password#1]\nX-Redis-Password: [REDACTED:password#2]"},
		{"quoted header argument", `curl -H 'X-Db-Password: a<b)cK9#x2Lq' https://x`, `curl -H 'X-Db-Password: [REDACTED:password#1]' https://x`},
		{"doppler service token with its config", "DOPPLER_TOKEN_X dp.st.prd_backend.WXJPF2KauuyViX2jNss3H3yKUENtYhPfvF6ISqyWvP", "DOPPLER_TOKEN_X [REDACTED:doppler-token#1]"},

		{"password holding an unclosed (? and %", `mysql_root_password = "cATaIfADW5(?CXb4e%cQK"`, `mysql_root_password = "[REDACTED:password#1]"`},
		{"percent-encoded password opening (?!", "jdbc:postgresql://db:5432/a?user=svc&password=5Qh%28%3F%21px43hulkI5xf8Y33&ssl=true", "jdbc:postgresql://db:5432/a?user=svc&password=[REDACTED:password#1]&ssl=true"},
		{"marker letters in mixed case are chance", "JwtSecret=e3ogAa3n2QncGQ2Msv7ZQ9sxoJrpAa-TOdoHGeDdaEU=", "JwtSecret=[REDACTED:secret#1]"},
		{"a < in a password opens no tag", "PASSWORD=ExDMB<yHZjo/SO0M", "PASSWORD=[REDACTED:password#1]"},
		// Encoded and split secrets (issue 17, leak 7).
		{"base64-wrapped", "echo T1BFTkFJX0FQSV9LRVk9c2stcHJvai1RdzNyVDd5VTlpTzFwQTVzRDJmRzhoSjRrTDZ6WDBjVjdiTjNtUTF3RTVyVDl5VTJpTzRwQTZzRDhmRzBoCg== | base64 -d > .env", "echo [REDACTED:openai-api-key#1] | base64 -d > .env"},
		{"percent-encoded", "POST /login body=password%3DKq7%23mZ2p9vLw%26user%3Dapp&next=%2Fhome", "POST /login body=password%3D[REDACTED:password#1]%26user%3Dapp&next=%2Fhome"},
		{"key split by a line break", "api_key = \"sk-proj-Qw3rT7yU9iO1pA5sD2fG8hJ4kL6z\n    X0cV7bN3mQ1wE5rT9yU2iO4pA6sD8fG0h\"\nnext = 1", "api_key = \"[REDACTED:openai-api-key#1]\"\nnext = 1"},
		{"key split by a CRLF line break", "api_key = \"sk-proj-Qw3rT7yU9iO1pA5sD2fG8hJ4kL6z\r\n    X0cV7bN3mQ1wE5rT9yU2iO4pA6sD8fG0h\"\r\nnext = 1\r\n", "api_key = \"[REDACTED:openai-api-key#1]\"\r\nnext = 1\r\n"},
		{"key split by a lone CR", "token: 'ghp_R8d2kLq9ZxV3mN7pT4wY\r6bC1sF5hJ020REME'", "token: '[REDACTED:github-token#1]'"},
		{"key split by an escaped CRLF in JSON", `{"api_key": "sk-proj-Qw3rT7yU9iO1pA5sD2fG8hJ4kL6z\r\nX0cV7bN3mQ1wE5rT9yU2iO4pA6sD8fG0h", "next": 1}`, `{"api_key": "[REDACTED:openai-api-key#1]", "next": 1}`},
		{"key split by an escaped line break in JSON inside JSON", `{"out": "{\"x\": \"ghp_R8d2kLq9ZxV3mN7pT4wY\\r\\n6bC1sF5hJ020REME\", \"n\": 1}"}`, `{"out": "{\"x\": \"[REDACTED:github-token#1]\", \"n\": 1}"}`},
		{"key split by an escaped line break in source", `token = "ghp_R8d2kLq9ZxV3mN7pT4wY\n6bC1sF5hJ020REME"`, `token = "[REDACTED:github-token#1]"`},
		{"CRLF ends a quoted value", "password = \"Kq7mZ2p9vLwQ\r\nretries = 3\r\n", "password = \"[REDACTED:password#1]\r\nretries = 3\r\n"},
		{"base64 of no secret", "data: SGVsbG8sIHdvcmxkISBUaGlzIGlzIGp1c3QgYSBncmVldGluZy4=", ""},

		// Kubernetes and Docker.
		{"k8s secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  username: YWRtaW4=\n  password: czNjcjN0LXBhc3N3b3Jk\n",
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  username: [REDACTED:kubernetes-secret#1]\n  password: [REDACTED:kubernetes-secret#2]\n"},
		{"k8s configmap", "kind: ConfigMap\ndata:\n  LOG_LEVEL: info\n  FEATURE: beta-search\n", ""},
		{"docker auths", `{"auths": {"ghcr.io": {"auth": "YWRtaW46czNjcjN0LXBhc3M="}}}`, `{"auths": {"ghcr.io": {"auth": "[REDACTED:auth#1]"}}}`},

		// Not secrets.
		{"references", "API_KEY=${API_KEY}\nTOKEN=$(cat /run/secrets/t)\npassword: {{ .Values.db.password }}\napi_key=os.environ[\"KEY\"]\napiKey: process.env.STRIPE_KEY\nsecret = settings.SECRET_KEY", ""},
		{"placeholders", "OPENAI_API_KEY=sk-...\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nAPI_KEY=YOUR_API_KEY\nSECRET_KEY=changeme-in-production\npassword: ********\napi_key: <your-key>\ntoken: [REDACTED]", ""},
		{"names that are not secrets", "max_tokens: 8192\nTOKEN_URL=https://oauth2.googleapis.com/token\nSECRET_NAME=prod/db\nPASSWORD_MIN_LENGTH=12\n\"token_type\": \"Bearer\"\nprimaryKey = \"customer_order_id\"\npublic_key: age1qy0l7m9ae2h2pn6pcc4pyywkqf0mqv9a3gtkl6as4sj9z9r4ntsq4rvxjh\nnextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA", ""},
		{"llm ids", `{"id": "chatcmpl-9Qx3vB8nW2mK5tR9yH4jL7pZ1cF6d", "tool_use_id": "toolu_01Qx3vB8nW2mK5tR9yH4jL7p", "call_id": "call_Qx3vB8nW2mK5tR9yH4jL7pZ1"}`, ""},
		{"hashes", "commit 3f2a9c1e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a\nsha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\nintegrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\ngithub.com/x/y v1.2.3 h1:q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2jA8eU1iO4wQ7=", ""},
		{"uuids", "request_id=6b1f6e8a-3c1d-4e2b-9a7f-0c5d4e3b2a19 SESSION_ID=0c5d4e3b-2a19-4e2b-9a7f-6b1f6e8a3c1d", ""},
		{"image", `{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}`, ""},
		{"code", "token = request.headers.get('Authorization')\nkey: teamData.team.name.toUpperCase().slice(0, 3),\npassword = get_password()", ""},
		{"thinking signature", `{"type": "thinking", "signature": "EqQBCkgIBRABGAIqQH2Xv1hC1p8qZ0rT9yB6cK3mH9sD5fG2jA8eU1iO4wQ7rY5tZ2xC9vB6nM3lK0jF8gH1dS4aP7oI2uY5tR8"}`, ""},
		{"prose words", "The token limit was exceeded. Pass the secret manager a key name. The bearer of bad news.", ""},
		// Code found in real Go and Python sources (module cache, stdlib).
		{"go code", "token := yaml_token_t{\npass := &analysis.Pass{\n\tpass *analysis.Pass\nHostKey: kexDHReply.HostKey,\nsinceToken: cscInvalNoHorizon,\nkey := openSSHEd25519PrivateKey{", ""},
		{"go constants", "SIOCGLIFTOKEN = -0x3f879678\nATTR_SHARED_KEY = C.NL80211_AUTHTYPE_SHARED_KEY\nERROR_AUTHORIZATION = 0x80280149", ""},
		{"go test output", "--- PASS: TestGoList/GOPATH (0.03s)\n--- PASS: TestRedact (0.01s)", ""},
		{"string lists", "names = ['ACAccount', 'ACAccountCredential', 'ACAccountStore', 'HMAccessoryOwnershipToken', 'NIConfiguration']", ""},
		{"docstrings", ":param auth: (optional) Auth tuple\n:param passphrase: (optional) if encrypted\npassword: (bool, optional): hide input", ""},
		{"regex and format constants", `LS32_PAT = "(?:{hex}:{hex}|{ipv4})"` + "\n" + `ZONE_ID_PAT = "(?:%25|%)(?:["`, ""},
		{"concatenation", "long_auth = 'username:' + 'password'\nuser_pass = (self.username + \":\" + self.password)", ""},
		{"call arguments", "access_token=request.resource_owner_key):", ""},
		{"env PWD", `cmd.Env = append(os.Environ(), "PWD="+dir)` + "\nOLDPWD=/home/dev", ""},
		{"value repeats the name", `a.hostKey = "hostkey1"` + "\n" + `password: "password123"`, ""},
		{"redis test keys", `key := "csc-e2e-populate"` + "\n" + `testKey := "test_key_12345"` + "\n" + `client.JSONGet(ctx, "test-key", "$.nonexistent")`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got, _ := newTestRedactor(t).Redact(tt.in)
			if got != want {
				t.Errorf("\n in: %q\ngot: %q\nwant %q", tt.in, got, want)
			}
		})
	}
}

// TestEveryVendorFormat draws a random token from each built-in vendor
// pattern and checks it is masked whole, in a few surroundings, and that
// it is masked by its own rule.
func TestEveryVendorFormat(t *testing.T) {
	samples := vendorSamples(t)
	for id, toks := range samples {
		for _, tok := range toks {
			for _, ctx := range []string{"%s", "key: %s\n", `{"v": "%s"}`, "x\\n%s\\n"} {
				in := strings.Replace(ctx, "%s", tok, 1)
				out, found := newTestRedactor(t).Redact(in)
				if strings.Contains(out, tok) || len(found) == 0 {
					t.Errorf("%s: %q not masked in %q: %q", id, tok, in, out)
					continue
				}
				if !strings.Contains(out, "[REDACTED:"+id+"#1]") && ctx == "%s" {
					t.Errorf("%s: %q masked as %q", id, tok, out)
				}
			}
		}
	}
}
