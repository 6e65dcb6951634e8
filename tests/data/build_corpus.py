"""Builds detection_corpus.jsonl: labelled prompts for fanout.detect.

Run from the repository root: ``python tests/data/build_corpus.py``. The file it
writes is committed; this script documents how the templated part was made. The
hand-written prompts (the tricky ones) are listed literally below.

Each line: ``{"id", "lang", "category", "text", "groups", "parts"}`` where
``groups`` is the expected grouping of the parts (``[[0]]`` for a prompt that must
stay whole) and ``parts`` (optional) are strings each detected part must start with.
Categories: ``single`` (must not be split), ``multi`` (independent parts),
``dependent`` (parts that must stay together), ``shared`` (context + parts;
``preamble`` names a string the shared preamble must contain).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("detection_corpus.jsonl")
entries: list[dict[str, Any]] = []


def add(lang: str, category: str, text: str, groups: list[list[int]], **extra: Any) -> None:
    entries.append({"id": f"{category}-{len(entries):03d}", "lang": lang, "category": category,
                    "text": text, "groups": groups, **extra})  # fmt: skip


ONE = [[0]]

# --- single questions that must stay whole ------------------------------------------------
singles = [
    ("en", "What is the capital of France?"),
    ("en", "Explain how a transformer's attention mechanism works, with an example."),
    ("en", "Which of these is a prime number?\nA. 21\nB. 27\nC. 29\nD. 33"),
    ("en", "Which language should I learn first?\na) Python\nb) JavaScript\nc) Go"),
    (
        "en",
        "Follow these steps to set up the project:\n1. Clone the repository\n2. Install the dependencies\n3. Run the tests\nWhat could go wrong at step 2?",
    ),
    (
        "en",
        "Write a function that does the following:\n1. reads a CSV file\n2. removes empty rows\n3. writes the result to JSON",
    ),
    ("en", "Compare the following databases for a small web app:\n- PostgreSQL\n- SQLite\n- MySQL"),
    (
        "en",
        "Consider these criteria when you review my essay:\n1. clarity\n2. structure\n3. grammar\nHere is the essay: The sea was calm that morning.",
    ),
    (
        "en",
        "First sort the list, then remove duplicates, then print it. Can you write that in Python?",
    ),
    (
        "en",
        "What does this code print?\n```python\n# 1. build the list\nxs = [1, 2, 3]\n# 2. double it\nprint([x * 2 for x in xs])\n```",
    ),
    (
        "en",
        'My teacher asked: "What is 2 + 2? And what is 3 + 3?" How should I explain addition to a child?',
    ),
    (
        "en",
        "> 1. Is the earth flat?\n> 2. Is the moon made of cheese?\nThis was posted on a forum. How should I respond politely?",
    ),
    ("en", "Translate into Spanish: 'Where is the station? How much is a ticket?'"),
    (
        "en",
        "Can you summarize the following text?\n\nThe meeting covered three items. 1. Budget. 2. Hiring. 3. The office move.",
    ),
    ("en", "Is it better to rent or to buy a house in a city with rising prices?"),
    (
        "en",
        "Please review this plan:\n1. Week one: research\n2. Week two: prototype\n3. Week three: user testing\nIs the timeline realistic?",
    ),
    ("en", "How do I do the following in git: 1) create a branch 2) commit 3) push it?"),
    ("en", "Rank these fruits by vitamin C content:\n• orange\n• kiwi\n• apple\n• strawberry"),
    ("en", "Why?"),
    ("en", "Give me three ideas for a birthday party for a ten-year-old."),
    (
        "en",
        "Here is my to-do list:\n- buy milk\n- call mom\n- fix the bike\nCan you turn it into a schedule for Saturday?",
    ),
    ("en", "What's the difference between TCP and UDP, and when would you use each?"),
    ("en", "Solve for x: 2x + 3 = 11. Show your steps."),
    ("en", 'In the sentence "Who let the dogs out? Who?", what is the figure of speech?'),
    (
        "en",
        "Choose the best option:\n(a) increase the price\n(b) cut costs\n(c) do nothing\nOur margins are falling.",
    ),
    (
        "en",
        "Please do the steps in order:\n1. Read the file\n2. Count the words\n3. Report the top ten words",
    ),
    (
        "en",
        "I have a list of requirements:\n1. It must run offline\n2. It must be free\n3. It must support Linux\nWhich note-taking app fits?",
    ),
    ("en", "Explain recursion to me like I'm five."),
    ("en", "Write a haiku about autumn."),
    ("en", "What should I name my cat? She is black and very playful."),
    ("zh", "法国的首都是哪里？"),
    ("zh", "请按以下步骤操作：\n1. 打开设置\n2. 选择网络\n3. 重启路由器\n这样能解决断网问题吗？"),
    ("zh", "下列哪个是质数？\nA. 21\nB. 27\nC. 29\nD. 33"),
    ("zh", "请解释什么是自回归生成，并举一个例子。"),
    ("zh", "比较以下三种编程语言的优缺点：\n- Python\n- Java\n- Go"),
    ("zh", "“什么是爱？什么是恨？”这句诗出自哪里？"),
    ("zh", "帮我写一封请假邮件，理由是生病了。"),
    ("ja", "日本で一番高い山は何ですか？"),
    ("ja", "次の手順で進めてください：\n1. ファイルを開く\n2. 内容を確認する\n3. 保存する"),
    ("ja", "次のうち正しいものを選んでください。\nA. 地球は平らだ\nB. 地球は丸い"),
    ("ja", "この文章を英語に翻訳してください：「今日はいい天気ですね。散歩に行きませんか？」"),
    ("ko", "한국의 수도는 어디인가요?"),
    ("ko", "다음 단계를 순서대로 진행하세요:\n1. 앱을 설치한다\n2. 로그인한다\n3. 설정을 변경한다"),
    ("ko", "다음 중 올바른 것을 선택하세요.\nA. 물은 100도에서 끓는다\nB. 물은 50도에서 끓는다"),
    ("ko", "LLM의 연속 배칭(continuous batching)이 무엇인지 설명해 주세요."),
    ("es", "¿Cuál es la capital de Australia?"),
    (
        "es",
        "Elige la opción correcta:\nA. Madrid\nB. Lisboa\nC. París\n¿Cuál es la capital de Portugal?",
    ),
    ("de", "Wie funktioniert ein Kühlschrank? Bitte einfach erklären."),
    (
        "de",
        "Beachte folgende Kriterien:\n1. Preis\n2. Qualität\n3. Lieferzeit\nWelcher Anbieter ist der beste?",
    ),
    ("fr", "Quelle est la différence entre un virus et une bactérie ?"),
    ("fr", "Peux-tu corriger ce texte : « Je suis aller au marché hier. » ?"),
    (
        "en",
        "Here are the results:\n1. Model A: 81%\n2. Model B: 79%\n3. Model C: 64%\nWhich model should we deploy, given that B is twice as fast?",
    ),
    ("en", "Tell me a joke about programmers."),
    (
        "en",
        "Fix the bug in this function:\n```js\nfunction add(a, b) {\n  // 1. check types\n  // 2. add\n  return a - b;\n}\n```\nWhat was wrong?",
    ),
    (
        "en",
        "Options:\n1) fly\n2) take the train\n3) drive\nWhat's the greenest way to get from Paris to Berlin?",
    ),
    ("en", "what is a monad"),
    ("en", "Describe the water cycle. Include evaporation, condensation and precipitation."),
    ("zh", "我有一个问题：为什么天空是蓝色的？"),
    ("en", "Could you help me? I need to write a cover letter for a junior developer job."),
    ("en", "Is 0.1 + 0.2 == 0.3 in Python? Why or why not?"),
    (
        "en",
        "Can you check my grammar?\n1. He go to school every day.\n2. She don't like apples.\n3. They was happy.",
    ),
]
for lang, text in singles:
    add(lang, "single", text, ONE)

# --- independent questions, hand-written ------------------------------------------------
multi = [
    (
        "en",
        "1. What is the capital of France?\n2. How many legs does a spider have?\n3. Who wrote Hamlet?",
        3,
    ),
    (
        "en",
        "Please answer these questions:\n1) Why is the sky blue?\n2) What causes tides?\n3) How do rainbows form?",
        3,
    ),
    ("en", "Q1: What is Docker?\nQ2: What is Kubernetes?\nQ3: What is a service mesh?", 3),
    (
        "en",
        "(1) Define entropy.\n(2) State the second law of thermodynamics.\n(3) Give an example of a reversible process.",
        3,
    ),
    (
        "en",
        "- What is the boiling point of water at sea level?\n- How far is the Moon from Earth?\n- What is the speed of light?",
        3,
    ),
    ("en", "What is photosynthesis?\nHow do vaccines work?\nWhy do cats purr?", 3),
    ("en", "I. Explain supply and demand.\nII. Describe inflation.\nIII. What is GDP?", 3),
    (
        "en",
        "a) What is a linked list?\nb) What is a hash map?\nc) What is a binary tree?\nd) What is a heap?",
        4,
    ),
    (
        "en",
        "Answer each separately:\n1. Translate 'thank you' into German.\n2. Translate 'good night' into Italian.",
        2,
    ),
    (
        "en",
        "1. Explain what a REST API is.\n2. Write a haiku about the sea.\n3. List three uses of baking soda.\n4. Why is Pluto no longer a planet?\n5. What is the square root of 144?",
        5,
    ),
    ("en", "Quick questions:\n• Who painted the Mona Lisa?\n• When did World War II end?", 2),
    ("en", "Question 1: What is machine learning?\nQuestion 2: What is deep learning?", 2),
    (
        "en",
        "1. What is the largest ocean?\n2. What is the longest river?\n\nKeep each answer under 50 words.",
        2,
    ),
    (
        "zh",
        "请回答以下问题：\n（1）光合作用是什么？\n（2）地球为什么有四季？\n（3）疫苗是如何起作用的？",
        3,
    ),
    ("zh", "1、北京有哪些著名景点？\n2、上海的特色美食是什么？\n3、广州的气候怎么样？", 3),
    ("zh", "①什么是区块链？\n②比特币是如何产生的？\n③以太坊和比特币有什么区别？", 3),
    ("zh", "一、简述牛顿第一定律。\n二、什么是动量守恒？\n三、解释能量守恒定律。", 3),
    ("zh", "为什么天空是蓝色的？海水为什么是咸的？彩虹是怎么形成的？", 3),
    ("ja", "1. 富士山の高さは？\n2. 日本の首都はどこですか？\n3. 桜はいつ咲きますか？", 3),
    ("ja", "質問1：光合成とは何ですか？\n質問2：なぜ空は青いのですか？", 2),
    (
        "ko",
        "1. 서울의 인구는 얼마인가요?\n2. 한글은 누가 만들었나요?\n3. 김치는 어떻게 만드나요?",
        3,
    ),
    ("ko", "다음 질문에 답해 주세요:\n(1) 광합성이란 무엇인가요?\n(2) 지구는 왜 자전하나요?", 2),
    ("ko", "파이썬이란 무엇인가요? 자바스크립트는 어디에 쓰이나요? 러스트의 장점은 무엇인가요?", 3),
    (
        "es",
        "1. ¿Qué es la fotosíntesis?\n2. ¿Por qué el cielo es azul?\n3. ¿Cómo funcionan las vacunas?",
        3,
    ),
    (
        "de",
        "1. Was ist ein Schwarzes Loch?\n2. Wie entsteht ein Regenbogen?\n3. Warum ist das Meer salzig?",
        3,
    ),
    (
        "fr",
        "1. Qu'est-ce que la photosynthèse ?\n2. Pourquoi le ciel est-il bleu ?\n3. Comment fonctionnent les vaccins ?",
        3,
    ),
    (
        "en",
        "Can you help with a few things?\n1. Suggest a title for my blog post about gardening.\n2. Recommend a good book on stoicism.\n3. Give me a 10-minute workout routine.",
        3,
    ),
    (
        "en",
        "Two questions. What is the half-life of carbon-14? And what is the atomic number of gold?",
        2,
    ),
]
for lang, text, n in multi:
    add(lang, "multi", text, [[i] for i in range(n)])

# --- dependent parts ----------------------------------------------------------------------
dependent = [
    (
        "en",
        "1. What is the tallest mountain in the world?\n2. How high is it?\n3. Who wrote Pride and Prejudice?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Write a short poem about the sea.\n2. Then translate it into French.\n3. What is the capital of Peru?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Pick a random number between 1 and 10.\n2. Based on your answer to 1, compute its square.\n3. What is the chemical symbol for iron?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Name a famous physicist.\n2. What is the boiling point of ethanol?\n3. What was the physicist from question 1 best known for?",
        [[0, 2], [1]],
    ),
    ("en", "1. Summarize the plot of Hamlet.\n2. Using that summary, write a tweet.", [[0, 1]]),
    (
        "en",
        "What is the largest planet? How many moons does it have? Who discovered penicillin?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "What's a good name for a golden retriever? Also, how often should I walk it? And how much should a puppy eat?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "- Suggest a name for a coffee shop.\n- Then write a slogan for it.\n- What's the best way to store coffee beans?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "Q1: Choose a programming language for beginners.\nQ2: Why did you choose it?\nQ3: What is the time complexity of binary search?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. List three renewable energy sources.\n2. Which of the above is cheapest?\n3. Who invented the telephone?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Calculate 15% of 240.\n2. Add 10 to the result.\n3. What is the freezing point of water in Fahrenheit?",
        [[0, 1], [2]],
    ),
    ("zh", "1. 什么是机器学习？\n2. 什么是深度学习？\n3. 两者有什么应用场景？", [[0, 1, 2]]),
    ("zh", "1. 世界上最长的河流是哪条？\n2. 它流经哪些国家？\n3. 谁发明了电话？", [[0, 1], [2]]),
    (
        "zh",
        "1. 写一首关于秋天的诗。\n2. 把上面的诗翻译成英文。\n3. 水的沸点是多少度？",
        [[0, 1], [2]],
    ),
    ("zh", "（1）推荐一本科幻小说。\n（2）那么它的作者是谁？\n（3）光速是多少？", [[0, 1], [2]]),
    (
        "ja",
        "1. 日本で一番長い川は何ですか？\n2. それはどこを流れていますか？\n3. 地球の直径は？",
        [[0, 1], [2]],
    ),
    (
        "ko",
        "1. 세계에서 가장 큰 사막은 어디인가요?\n2. 그것의 면적은 얼마인가요?\n3. 물의 화학식은 무엇인가요?",
        [[0, 1], [2]],
    ),
    ("ko", "1. 짧은 시를 한 편 써 주세요.\n2. 위의 시를 영어로 번역해 주세요.", [[0, 1]]),
    (
        "en",
        "1. Recommend a laptop for video editing.\n2. How much does it cost?\n3. Is it good for gaming too?",
        [[0, 1, 2]],
    ),
    (
        "en",
        "1. What is the population of Canada?\n2. What is the population of Mexico?\n3. Compare the previous answers and say which is larger.",
        [[0, 1, 2]],
    ),
    (
        "es",
        "1. ¿Cuál es el río más largo de Europa?\n2. ¿Por qué países pasa? Based on your answer to 1.\n3. ¿Qué es el ADN?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Give me a word that rhymes with 'cat'.\n2. Use that word in a sentence.\n3. Explain what an API is.\n4. What year did the Berlin Wall fall?",
        [[0, 1], [2], [3]],
    ),
]
for lang, text, groups in dependent:
    add(lang, "dependent", text, groups)

# --- shared context + questions -----------------------------------------------------------
DOC_EN = (
    "Acme Corp reported revenue of $12M in 2024, up 20% from 2023. Operating costs rose 5%. "
    "The company opened offices in Berlin and Tokyo and hired 40 engineers."
)
shared = [
    (
        "en",
        f"Read the report below and answer the questions.\n\n{DOC_EN}\n\n1. What was the revenue in 2024?\n2. Where did the company open offices?\n3. How many engineers were hired?",
        3,
        "Acme Corp",
    ),
    (
        "en",
        f"{DOC_EN}\n\nQuestions:\n- By how much did revenue grow?\n- Did operating costs rise faster than revenue?",
        2,
        "Acme Corp",
    ),
    (
        "en",
        "Context: Our API returns 429 when the rate limit is exceeded. Limits are 500 requests per minute.\n\n1) What does a 429 mean here?\n2) How many requests per second is that on average?",
        2,
        "429",
    ),
    (
        "en",
        "The following list describes our team:\n1. Ana, backend\n2. Bo, frontend\n3. Cy, design\n\nNow answer:\n1. Who should fix a CSS bug?\n2. Who should design the new logo?",
        2,
        "Ana, backend",
    ),
    (
        "zh",
        "阅读下面的材料，回答问题。\n\n张三在2020年创办了一家公司，主要做人工智能客服。公司现有员工50人，总部在杭州。\n\n1. 公司是哪一年创办的？\n2. 公司总部在哪里？\n3. 公司有多少员工？",
        3,
        "张三",
    ),
    (
        "ko",
        "다음 글을 읽고 질문에 답하세요.\n\n철수는 2019년에 서울에서 카페를 열었다. 카페는 매일 아침 7시에 문을 연다.\n\n1. 철수는 언제 카페를 열었나요?\n2. 카페는 몇 시에 문을 여나요?",
        2,
        "철수",
    ),
    (
        "ja",
        "以下の文章を読んで質問に答えてください。\n\n田中さんは東京に住んでいて、毎朝電車で会社に通っています。\n\n1. 田中さんはどこに住んでいますか？\n2. 田中さんは何で通勤していますか？",
        2,
        "田中",
    ),
    (
        "en",
        "```python\ndef f(xs):\n    return sorted(set(xs))\n```\n\n1. What does f return for [3, 1, 3]?\n2. What is the time complexity of f?",
        2,
        "def f",
    ),
    (
        "en",
        'Here is a paragraph: "The mitochondria is the powerhouse of the cell. It produces ATP."\n\n1. What does the mitochondria produce?\n2. Rewrite the paragraph for a child.',
        2,
        "powerhouse",
    ),
    (
        "de",
        "Lies den Text und beantworte die Fragen.\n\nMaria wohnt in Hamburg und arbeitet als Ärztin. Sie fährt jeden Tag mit dem Fahrrad.\n\n1. Wo wohnt Maria?\n2. Was ist Marias Beruf?",
        2,
        "Maria",
    ),
]
for lang, text, n, pre in shared:
    add(lang, "shared", text, [[i] for i in range(n)], preamble=pre)

# --- templated: the same questions in every numbering style and language -------------------
POOLS = {
    "en": ["What is the speed of sound in air?", "Who discovered gravity?", "How do bees make honey?",
           "Why do leaves change colour in autumn?", "What is the largest desert on Earth?"],
    "zh": ["声音在空气中的速度是多少？", "谁发现了万有引力？", "蜜蜂是怎么酿蜜的？", "为什么秋天树叶会变色？", "地球上最大的沙漠是哪个？"],
    "ja": ["空気中の音速はどれくらいですか？", "万有引力を発見したのは誰ですか？", "ミツバチはどうやって蜂蜜を作りますか？",
           "なぜ秋に葉の色が変わるのですか？", "地球上で最大の砂漠はどこですか？"],
    "ko": ["공기 중 소리의 속도는 얼마인가요?", "만유인력을 발견한 사람은 누구인가요?", "꿀벌은 어떻게 꿀을 만드나요?",
           "가을에 나뭇잎 색이 왜 변하나요?", "지구에서 가장 큰 사막은 어디인가요?"],
}  # fmt: skip
STYLES: list[Callable[[int], str]] = [
    lambda i: f"{i}.", lambda i: f"{i})", lambda i: f"({i})", lambda i: f"Q{i}:",
    lambda i: f"{i}、", lambda i: f"（{i}）", lambda i: "①②③④⑤"[i - 1], lambda i: "-",
]  # fmt: skip
for lang, pool in POOLS.items():
    for s_index, style in enumerate(STYLES):
        n = 3 + (s_index % 3)
        lines = [f"{style(i + 1)} {q}" for i, q in enumerate(pool[:n])]
        add(lang, "multi", "\n".join(lines), [[i] for i in range(n)], parts=pool[:n])
# Pools behind an instruction line, one per line without markers.
for lang, pool in POOLS.items():
    head = {
        "en": "Answer these:",
        "zh": "请回答：",
        "ja": "答えてください：",
        "ko": "답해 주세요:",
    }[lang]
    add(lang, "multi", head + "\n" + "\n".join(pool[:4]), [[i] for i in range(4)], parts=pool[:4])
# Single questions wrapped with harmless context.
for lang, pool in POOLS.items():
    for q in pool:
        add(lang, "single", q, ONE)

# --- issue 13: development examples for references, framing, inline lists and code ----------
# Written for the rules of issue 13 (pronouns, possessives, demonstratives, definite noun
# phrases and ellipsis in each language; instructions over the whole list; lists on one
# line; heading-style numbering in CJK; code comments that end in "?"). None is taken
# from the held-out sets.
DEP = "dependent"
dev13: list[tuple[str, str, str, list[list[int]]]] = [
    # personal pronouns and possessives pointing at someone an earlier part introduced
    ("en", DEP, "1. Who painted The Starry Night?\n2. In which country was he born?\n3. What is the boiling point of mercury?", [[0, 1], [2]]),
    ("en", DEP, "1. Who was the first woman to win a Nobel Prize?\n2. What did she study?\n3. How many strings does a violin have?", [[0, 1], [2]]),
    ("en", DEP, "1. Who founded Microsoft? 2. How old was he at the time? 3. What is the largest desert?", [[0, 1], [2]]),
    ("en", DEP, "Q1: Name a famous female pilot.\nQ2: What was her most famous flight?\nQ3: How does a jet engine work?", [[0, 1], [2]]),
    ("en", DEP, "1. Which band recorded Abbey Road?\n2. Where did they play their last concert?\n3. What is a prime number?", [[0, 1], [2]]),
    ("en", DEP, "1. Who wrote The Old Man and the Sea? 2. Why is his style so admired?", [[0, 1]]),
    ("en", DEP, "I'm preparing a quiz for my history class tomorrow, so please help me out:\n1. Who was the first emperor of Rome?\n2. How did he come to power?\n3. What is the longest river in Asia?", [[0, 1], [2]]),
    ("zh", DEP, "1. 谁发明了电灯？\n2. 他还有哪些发明？\n3. 月亮为什么有阴晴圆缺？", [[0, 1], [2]]),
    ("zh", DEP, "1、第一位登上月球的人是谁？2、他是哪一年登月的？3、海水为什么是咸的？", [[0, 1], [2]]),
    ("zh", DEP, "1. 请推荐一位中国古代女诗人。\n2. 她最有名的作品是什么？", [[0, 1]]),
    ("zh", DEP, "（1）《红楼梦》的作者是谁？（2）他生活在哪个朝代？（3）长江有多长？", [[0, 1], [2]]),
    ("ja", DEP, "1. 相対性理論を提唱したのは誰ですか？\n2. 彼はどこで生まれましたか？\n3. 日本で一番大きい湖は？", [[0, 1], [2]]),
    ("ja", DEP, "1. 有名な女性作家を一人挙げてください。\n2. 彼女の代表作は何ですか？\n3. 光の速さは？", [[0, 1], [2]]),
    ("ja", DEP, "1. 電話を発明したのは誰ですか？\n2. どこで生まれましたか？\n3. 水の沸点は？", [[0, 1], [2]]),
    ("ko", DEP, "1. 전화기를 발명한 사람은 누구인가요?\n2. 그는 어느 나라 출신인가요?\n3. 지구의 둘레는 얼마인가요?", [[0, 1], [2]]),
    ("ko", DEP, "1. 유명한 여성 과학자를 한 명 알려 주세요.\n2. 그녀는 무엇을 발견했나요?\n3. 무지개는 어떻게 생기나요?", [[0, 1], [2]]),
    ("ko", DEP, "1. 한글을 만든 왕은 누구인가요? 2. 그분의 다른 업적은 무엇인가요? 3. 바다는 왜 파란가요?", [[0, 1], [2]]),
    ("ko", DEP, "1. 비행기를 처음 만든 사람은 누구인가요?\n2. 어디서 태어났나요?\n3. 달은 왜 빛나나요?", [[0, 1], [2]]),
    ("de", DEP, "1. Wer hat die Relativitätstheorie entwickelt?\n2. Wo ist er geboren?\n3. Was ist die Hauptstadt von Kanada?", [[0, 1], [2]]),
    ("de", DEP, "1. Nenne eine berühmte Malerin.\n2. Was ist ihr bekanntestes Bild?\n3. Wie viele Planeten hat das Sonnensystem?", [[0, 1], [2]]),
    ("de", DEP, "1) Wer hat den Buchdruck erfunden? 2) In welcher Stadt lebte er? 3) Warum ist Gras grün?", [[0, 1], [2]]),
    ("fr", DEP, "1. Qui a découvert la radioactivité ?\n2. Où a-t-il fait ses études ?\n3. Quelle est la capitale du Pérou ?", [[0, 1], [2]]),
    ("fr", DEP, "1. Qui a écrit Les Misérables ?\n2. Quel âge avait-il à sa mort ?\n3. Pourquoi le ciel est-il bleu ?", [[0, 1], [2]]),
    ("fr", DEP, "1. Nomme une chanteuse française célèbre.\n2. Quelle est sa chanson la plus connue ?\n3. Combien de temps faut-il pour cuire un œuf ?", [[0, 1], [2]]),
    ("fr", DEP, "1. Qui a peint la Joconde ?\n2. Elle est exposée où ?\n3. Qu'est-ce qu'un trou noir ?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Quién pintó el Guernica?\n2. ¿Dónde nació él?\n3. ¿Cuál es el río más largo de África?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Quién escribió Don Quijote?\n2. ¿Dónde nació?\n3. ¿Qué es un agujero negro?", [[0, 1], [2]]),
    ("es", DEP, "1. Nombra una científica famosa.\n2. ¿Cuál fue su mayor descubrimiento?\n3. ¿Cuántos huesos tiene el cuerpo humano?", [[0, 1], [2]]),
    ("es", DEP, "1) ¿Quién fue Frida Kahlo? 2) ¿Qué estilo tenía ella? 3) ¿Cuál es la capital de Chile?", [[0, 1], [2]]),
    # definite references to something an earlier part introduced or asked for
    ("en", DEP, "1. Pick a country in South America.\n2. What language is spoken in the country?\n3. What is the speed of sound?", [[0, 1], [2]]),
    ("en", DEP, "1. Suggest a name for my podcast about history.\n2. Write a short description that fits the name.\n3. How many hours are in a week?", [[0, 1], [2]]),
    ("en", DEP, "1. Which element has the symbol Fe?\n2. What is the melting point of the element?\n3. Who painted the Mona Lisa?", [[0, 1], [2]]),
    ("en", DEP, "1. Recommend a board game for four players.\n2. How long does a round of this game take?", [[0, 1]]),
    ("en", DEP, "1. Think of a word that means happy.\n2. Use the word in a sentence.\n3. What is the tallest tree species?", [[0, 1], [2]]),
    ("de", DEP, "1. Wähle eine Stadt in Spanien.\n2. Was kann man in der Stadt besichtigen?\n3. Was ist ein Atom?", [[0, 1], [2]]),
    ("fr", DEP, "1. Choisis un film français des années 90.\n2. Résume le film en trois phrases.\n3. Qu'est-ce que l'ADN ?", [[0, 1], [2]]),
    ("fr", DEP, "1. Propose un nom pour ma boulangerie.\n2. Écris un slogan qui va avec ce nom.", [[0, 1]]),
    ("es", DEP, "1. Elige un país de Asia.\n2. ¿Cuál es la comida típica del país?\n3. ¿Qué es la gravedad?", [[0, 1], [2]]),
    ("zh", DEP, "1. 推荐一本关于历史的书。\n2. 这本书适合初学者吗？\n3. 什么是黑洞？", [[0, 1], [2]]),
    ("zh", DEP, "1. 给我的咖啡店起一个名字。\n2. 为这个名字写一句口号。", [[0, 1]]),
    ("ja", DEP, "1. 日本の都市を一つ選んでください。\n2. その都市の名物は何ですか？\n3. 虹はなぜできるのですか？", [[0, 1], [2]]),
    ("ko", DEP, "1. 한국 영화를 한 편 추천해 주세요.\n2. 그 영화의 감독은 누구인가요?\n3. 달까지의 거리는 얼마인가요?", [[0, 1], [2]]),
    # ellipsis
    ("en", DEP, "1. What is the population of Brazil?\n2. And of Argentina?\n3. Who invented radio?", [[0, 1], [2]]),
    ("de", DEP, "1. Wie hoch ist die Zugspitze?\n2. Und der Mont Blanc?\n3. Was ist Photosynthese?", [[0, 1], [2]]),
    ("fr", DEP, "1. Quelle est la capitale de l'Australie ?\n2. Et celle du Canada ?\n3. Qui a inventé le téléphone ?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Cuántos habitantes tiene Madrid?\n2. ¿Y Barcelona?\n3. ¿Qué es el ADN?", [[0, 1], [2]]),
    ("zh", DEP, "1. 北京的人口是多少？\n2. 上海呢？\n3. 什么是DNA？", [[0, 1], [2]]),
    ("ja", DEP, "1. 東京の人口は？\n2. 大阪は？\n3. DNAとは何ですか？", [[0, 1], [2]]),
    ("ko", DEP, "1. 서울의 인구는 얼마인가요?\n2. 부산은요?\n3. 태양은 왜 뜨거운가요?", [[0, 1], [2]]),
    # an instruction over the whole list: the prompt stays whole
    ("en", DEP, "Rank these questions from easiest to hardest:\n1. What is 2+2?\n2. Prove Fermat's last theorem.\n3. What is the derivative of x^2?", [[0, 1, 2]]),
    ("en", DEP, "Answer these with the same single word:\n1. What color is the sky on a clear day?\n2. What color is the ocean?\n3. What color are blueberries?", [[0, 1, 2]]),
    ("en", DEP, "Write a short story in three parts:\n1. Who is the hero?\n2. What does she lose?\n3. How does she get it back?", [[0, 1, 2]]),
    ("en", DEP, "Which of these is the easiest to answer? 1. What is the capital of Peru? 2. What is dark energy? 3. What is 7 times 8?", [[0, 1, 2]]),
    ("de", DEP, "Ordne diese Fragen nach Schwierigkeit:\n1. Was ist 3 mal 3?\n2. Was ist ein Integral?\n3. Was besagt die Riemannsche Vermutung?", [[0, 1, 2]]),
    ("fr", DEP, "Réponds à toutes ces questions par le même mot :\n1. Quelle est la couleur du ciel ?\n2. Quelle est la couleur de la mer ?", [[0, 1]]),
    ("es", DEP, "Escribe un poema en tres partes:\n1. ¿Quién es el protagonista?\n2. ¿Qué desea?\n3. ¿Cómo termina?", [[0, 1, 2]]),
    ("zh", DEP, "请按难度给下面的问题排序：\n1. 1加1等于几？\n2. 什么是微积分？\n3. 黎曼猜想是什么？", [[0, 1, 2]]),
    ("zh", DEP, "用同一个词回答以下问题：1、天空是什么颜色？2、大海是什么颜色？", [[0, 1]]),
    ("ja", DEP, "次の質問を難しい順に並べてください。\n1. 1+1は？\n2. 微分とは？\n3. リーマン予想とは？", [[0, 1, 2]]),
    ("ko", DEP, "다음 질문들을 쉬운 순서대로 정렬해 주세요.\n1. 2 더하기 2는?\n2. 미분이란?\n3. 페르마의 마지막 정리란?", [[0, 1, 2]]),
    ("ko", DEP, "세 부분으로 된 짧은 이야기를 써 주세요:\n1. 주인공은 누구인가요?\n2. 무엇을 잃어버리나요?\n3. 어떻게 되찾나요?", [[0, 1, 2]]),
    ("en", DEP, "1. What is the population of India?\n2. What is the population of China?\n3. Rank them from largest to smallest.", [[0, 1, 2]]),
    # lists on one line and heading-style numbering
    ("en", "multi", "1. What is a neutron star? 2. Explain how vaccines train the immune system. 3. Who was Ada Lovelace?", [[0], [1], [2]]),
    ("en", DEP, "(1) What is inflation? (2) How do central banks fight it?", [[0, 1]]),
    ("en", "multi", "Q1: What is Rust used for? Q2: Why is Go popular for servers?", [[0], [1]]),
    ("en", "multi", "a) Define velocity. b) Define acceleration. c) What is a newton?", [[0], [1], [2]]),
    ("en", "multi", "Quick quiz: 1. What is the capital of Japan? 2. How many legs does an insect have?", [[0], [1]]),
    ("zh", "multi", "1、什么是光合作用？2、为什么会下雨？3、地球有多少岁？", [[0], [1], [2]]),
    ("zh", "multi", "问题一：什么是人工智能？\n问题二：区块链有什么用？", [[0], [1]]),
    ("zh", "multi", "问题一：什么是通货膨胀？问题二：汇率是怎么决定的？", [[0], [1]]),
    ("zh", "multi", "第一题：水的化学式是什么？\n第二题：太阳系有几颗行星？", [[0], [1]]),
    ("ja", "multi", "問1：光合成とは何ですか？\n問2：地震はなぜ起きるのですか？", [[0], [1]]),
    ("ja", "multi", "質問一：日本の首都は？質問二：富士山の高さは？", [[0], [1]]),
    ("ko", "multi", "문제 1. 물의 끓는점은 몇 도인가요?\n문제 2. 지구에서 가장 높은 산은 어디인가요?", [[0], [1]]),
    ("de", "multi", "1. Was ist ein Vulkan? 2. Wie funktioniert ein Elektromotor? 3. Wer war Goethe?", [[0], [1], [2]]),
    ("fr", "multi", "1) Qu'est-ce qu'un volcan ? 2) Comment fonctionne un moteur électrique ?", [[0], [1]]),
    ("es", "multi", "(1) ¿Qué es un volcán? (2) ¿Cómo funciona un motor eléctrico?", [[0], [1]]),
    # references that resolve inside their own part, and dummy pronouns: still independent
    ("en", "multi", "1. Who invented the telephone, and where was he born?\n2. Why do cats purr?\n3. How long does it take to boil an egg?", [[0], [1], [2]]),
    ("en", "multi", "1. What is a monad and why is it useful?\n2. Who wrote Dracula and when did he die?\n3. Is it safe to eat raw cookie dough?", [[0], [1], [2]]),
    ("en", "multi", "1. How does a bee find its way home?\n2. Why does the moon change its shape?\n3. What is the capital of Chile?", [[0], [1], [2]]),
    ("de", "multi", "1. Wie spät ist es in Tokio?\n2. Gibt es Leben auf dem Mars?\n3. Wer hat Faust geschrieben und wann ist er gestorben?", [[0], [1], [2]]),
    ("fr", "multi", "1. Quelle heure est-il à Tokyo ?\n2. Y a-t-il de l'eau sur Mars ?\n3. Pourquoi la mer est-elle salée ?", [[0], [1], [2]]),
    ("es", "multi", "1. ¿Qué es la fotosíntesis y por qué es importante?\n2. ¿Quién escribió el Quijote y dónde nació?\n3. ¿Cuánto mide la Torre Eiffel?", [[0], [1], [2]]),
    ("zh", "multi", "1. 谁发明了电话？他是哪国人？\n2. 为什么天空是蓝色的？", [[0], [1]]),
    ("ko", "multi", "1. 이순신 장군은 누구이고, 그의 업적은 무엇인가요?\n2. 김치는 어떻게 만드나요?", [[0], [1]]),
    ("ja", "multi", "1. 夏目漱石は誰ですか？彼の代表作は？\n2. 地球はなぜ丸いのですか？", [[0], [1]]),
    # code whose comments end in "?": one question
    ("en", "single", "My config:\n\n    workers: 4      # too many?\n    timeout: 30     # seconds, ok?\n\nWhy does the server run out of memory under load?", [[0]]),
    ("en", "single", "Look at this:\n    x = load()   # is this slow?\n    y = parse(x) # or this?\nHow can I profile which line is slow?", [[0]]),
    ("en", "single", "Here is the query:\n    SELECT * FROM users -- need all columns?\n    WHERE age > 30; -- index?\nHow do I make it faster?", [[0]]),
]  # fmt: skip
for lang, category, text, groups in dev13:
    add(lang, category, text, groups)
# Two more batches, written after the rules above and scored before any change they
# prompted (batch two: 3 of 30 dependent groups split apart; batch three: 1 of 12).
dev13_more: list[tuple[str, str, str, list[list[int]]]] = [
    # dependent, new phrasings
    ("en", DEP, "1. Name a Renaissance sculptor.\n2. Describe his most famous statue.\n3. What is the atomic number of carbon?", [[0, 1], [2]]),
    ("en", DEP, "- Which city hosted the 2012 Olympics?\n- How many people live there?\n- Why do leaves change colour in autumn?", [[0, 1], [2]]),
    ("en", DEP, "1. Suggest a book for a long flight.\n2. Summarize the book in two lines.\n3. How do noise-cancelling headphones work?", [[0, 1], [2]]),
    ("en", DEP, "1. Who directed Jaws?\n2. What other films did he make?\n3. What did his first film earn?", [[0, 1, 2]]),
    ("en", DEP, "1. Invent a superhero.\n2. What are her powers?\n3. Who is her enemy?\n4. What is the capital of Iceland?", [[0, 1, 2], [3]]),
    ("en", DEP, "1. Give me a random animal.\n2. Where does this animal live?\n3. What is 15 times 4?", [[0, 1], [2]]),
    ("en", DEP, "1) What is the tallest building in the world? 2) When was it finished? 3) Who designed the Sydney Opera House?", [[0, 1], [2]]),
    ("en", DEP, "Please answer the following questions for my homework, thanks a lot in advance:\n1. Which planet is known as the Red Planet?\n2. How long is a day there?\n3. What gas do plants absorb?", [[0, 1], [2]]),
    ("de", DEP, "1. Welcher Komponist schrieb die Zauberflöte?\n2. Wann ist er gestorben?\n3. Was ist ein Oxid?", [[0, 1], [2]]),
    ("de", DEP, "1. Empfiehl mir einen Roman.\n2. Worum geht es in dem Roman?\n3. Wie weit ist der Mond entfernt?", [[0, 1], [2]]),
    ("fr", DEP, "1. Quelle reine a fait construire le Petit Trianon ?\n2. Quand est-elle morte ?\n3. Qu'est-ce que la photosynthèse ?", [[0, 1], [2]]),
    ("fr", DEP, "1. Recommande-moi une série.\n2. Combien de saisons a la série ?\n3. Pourquoi la Lune change-t-elle de forme ?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Quién inventó la imprenta?\n2. ¿En qué ciudad vivía?\n3. ¿Qué es un ecosistema?", [[0, 1], [2]]),
    ("es", DEP, "1. Recomiéndame una novela corta.\n2. ¿Quién es el autor de la novela?\n3. ¿Por qué el mar es salado?", [[0, 1], [2]]),
    ("zh", DEP, "1. 《西游记》的作者是谁？\n2. 她还写过什么？\n3. 为什么冬天会下雪？", [[0, 1], [2]]),
    ("zh", DEP, "1. 推荐一部动画电影。\n2. 这部电影的导演是谁？\n3. 光合作用需要哪些条件？", [[0, 1], [2]]),
    ("zh", DEP, "1. 世界上最高的山是哪座？\n2. 它有多高？\n3. 谁写了《三国演义》？", [[0, 1], [2]]),
    ("ja", DEP, "1. 日本で一番古いお寺はどこですか？\n2. それはいつ建てられましたか？\n3. 地球から太陽までの距離は？", [[0, 1], [2]]),
    ("ja", DEP, "1. おすすめの映画を一本教えてください。\n2. その映画の監督は誰ですか？\n3. 水の化学式は？", [[0, 1], [2]]),
    ("ko", DEP, "1. 세종대왕은 누구인가요?\n2. 그의 가장 큰 업적은 무엇인가요?\n3. 지구는 왜 자전하나요?", [[0, 1], [2]]),
    ("ko", DEP, "1. 재미있는 소설을 한 권 추천해 주세요.\n2. 그 소설의 작가는 누구인가요?\n3. 빛은 얼마나 빠른가요?", [[0, 1], [2]]),
    # whole-list instructions, new phrasings
    ("en", DEP, "Sort the following questions by how long they would take to answer:\n1. What is 3+3?\n2. Explain quantum field theory.\n3. Who wrote Macbeth?", [[0, 1, 2]]),
    ("en", DEP, "Pick the best of these interview questions and explain why:\n- What is your biggest weakness?\n- Where do you see yourself in five years?\n- Why do you want this job?", [[0, 1, 2]]),
    ("en", DEP, "Create a quiz for kids with these questions:\n1. What do bees make?\n2. How many legs does a spider have?", [[0, 1]]),
    ("de", DEP, "Schreibe eine kurze Geschichte, die diese Fragen beantwortet:\n1. Wer ist die Heldin?\n2. Was sucht sie?", [[0, 1]]),
    ("fr", DEP, "Compare ces deux questions et dis laquelle est la plus difficile :\n1. Qu'est-ce qu'un nombre premier ?\n2. Qu'est-ce qu'une intégrale ?", [[0, 1]]),
    ("es", DEP, "Responde todas con un solo número:\n1. ¿Cuántas patas tiene un perro?\n2. ¿Cuántas ruedas tiene un coche?", [[0, 1]]),
    ("zh", DEP, "请比较下面两个问题哪个更难：\n1. 什么是质数？\n2. 什么是积分？", [[0, 1]]),
    ("ja", DEP, "次の質問を比べて、どれが一番簡単か教えてください。\n1. 1+1は？\n2. 積分とは？", [[0, 1]]),
    ("ko", DEP, "다음 질문들을 비교해서 어느 것이 더 어려운지 알려 주세요.\n1. 소수란 무엇인가요?\n2. 적분이란 무엇인가요?", [[0, 1]]),
    # independent, new phrasings (some with references inside a part, some deictic)
    ("en", "multi", "1. How do I make my cat stop scratching the sofa?\n2. What is the best way to learn Japanese, and how long does it take?\n3. Why is the sky dark at night?", [[0], [1], [2]]),
    ("en", "multi", "1. What is the difference between a virus and a bacterium?\n2. How do I change a flat tyre?\n3. What should I cook this weekend?", [[0], [1], [2]]),
    ("en", "multi", "Q1. Who was Nikola Tesla and what is he famous for? Q2. How does a heat pump work?", [[0], [1]]),
    ("de", "multi", "1. Was ist ein Algorithmus? 2. Wie backe ich Brot? 3. Warum ist es im Winter kalt?", [[0], [1], [2]]),
    ("fr", "multi", "1. Comment fonctionne un four à micro-ondes ?\n2. Qui était Napoléon et pourquoi est-il célèbre ?\n3. Quelle est la meilleure saison pour visiter Paris ?", [[0], [1], [2]]),
    ("es", "multi", "1. ¿Cómo se hace una tortilla de patatas?\n2. ¿Quién fue Simón Bolívar y qué logró?\n3. ¿Por qué los gatos ronronean?", [[0], [1], [2]]),
    ("zh", "multi", "1. 如何学好英语？\n2. 熊猫吃什么？\n3. 为什么夏天比冬天热？", [[0], [1], [2]]),
    ("zh", "multi", "问题1：什么是机器学习？问题2：怎样保持健康？问题3：长城有多长？", [[0], [1], [2]]),
    ("ja", "multi", "1. 東京でおすすめの観光地は？\n2. 寿司の歴史を教えてください。\n3. 地震はなぜ起きるのですか？", [[0], [1], [2]]),
    ("ko", "multi", "1. 김치찌개는 어떻게 만드나요?\n2. 조선 시대는 언제 시작되었나요?\n3. 고양이는 왜 밤에 활동하나요?", [[0], [1], [2]]),
    ("ko", "multi", "질문 1: 블록체인이란 무엇인가요? 질문 2: 서울에서 가볼 만한 곳은 어디인가요?", [[0], [1]]),
]  # fmt: skip
dev13_code_and_cues: list[tuple[str, str, str, list[list[int]]]] = [
    # singles that must stay whole
    ("en", "single", "I scored 7. 8. 9. in the last three rounds. Is my average improving?", [[0]]),
    ("en", "single", "Which option is cheaper: 1) a monthly pass at $90 or 2) ten single tickets at $8 each?", [[0]]),
    ("en", "single", "Here is my script:\n\n    import os\n    path = os.getcwd()  # right dir?\n    print(path)   # why empty?\n\nWhat am I doing wrong?", [[0]]),
    ("en", "single", "Rewrite these questions to sound more polite:\n1. Where is my order?\n2. Why is it late?\n3. Who is responsible?", [[0]]),
    ("en", "single", "The teacher asked: 1. What is a noun? 2. What is a verb? How can I explain these to a six-year-old?", [[0]]),
    ("zh", "single", "我的代码：\n    x = 1  # 对吗？\n    y = 2  # 这样写可以吗？\n为什么输出不对？", [[0]]),
    ("de", "single", "Beantworte die folgenden Fragen mit demselben Wort:\n1. Welche Farbe hat Schnee?\n2. Welche Farbe hat Milch?", [[0]]),
    ("ja", "single", "以下の質問に同じ単語で答えてください。\n1. 雪の色は？\n2. 牛乳の色は？", [[0]]),
    ("es", "single", "Traduce al inglés estas preguntas:\n1. ¿Dónde está el baño?\n2. ¿Cuánto cuesta?", [[0]]),
    # multi with various cues
    ("en", "multi", "Three quick ones. What is the speed of light? Who painted Guernica? How many bones does a shark have?", [[0], [1], [2]]),
    ("en", "multi", "1. What is a hash table? 2. How do I reverse a string in Python? 3. What does HTTP 404 mean?", [[0], [1], [2]]),
    ("en", "multi", "Background: I'm a nurse moving to Canada next year with my two kids.\n\n1. What documents do I need?\n2. How do schools work there?\n3. What is the cost of living in Toronto?", [[0], [1], [2]]),
    ("fr", "multi", "Q1 : Qu'est-ce que l'inflation ? Q2 : Comment fonctionne la Bourse ?", [[0], [1]]),
    ("es", "multi", "1. ¿Qué es la inflación?\n2. ¿Cómo funciona la bolsa de valores?\n3. ¿Quién escribió La casa de los espíritus?", [[0], [1], [2]]),
    ("de", "multi", "Frage 1: Was ist Inflation? Frage 2: Wie funktioniert die Börse?", [[0], [1]]),
    ("zh", "multi", "（1）什么是通货膨胀？（2）股票市场如何运作？", [[0], [1]]),
    ("ja", "multi", "1、インフレとは何ですか？2、株式市場はどう動きますか？", [[0], [1]]),
    ("ko", "multi", "(1) 인플레이션이란 무엇인가요? (2) 주식 시장은 어떻게 움직이나요?", [[0], [1]]),
    # dependent: more kinds
    ("en", DEP, "What is the largest lake in Africa? How deep is it? Who wrote Moby-Dick?", [[0, 1], [2]]),
    ("en", DEP, "1. Pick a famous bridge.\n2. When was the bridge built?\n3. How tall are its towers?\n4. What is a haiku?", [[0, 1, 2], [3]]),
    ("en", DEP, "1. Choose a color for my kitchen.\n2. Explain why that color works.\n3. What is the tallest dog breed?", [[0, 1], [2]]),
    ("en", DEP, "1. Name two rivers in Europe.\n2. Which one is longer?\n3. What is the boiling point of water?", [[0, 1], [2]]),
    ("de", DEP, "1. Nenne ein Tier, das in der Arktis lebt.\n2. Was frisst dieses Tier?\n3. Wer hat das Telefon erfunden?", [[0, 1], [2]]),
    ("fr", DEP, "1. Donne-moi un mot qui rime avec « chat ».\n2. Utilise ce mot dans une phrase.\n3. Qu'est-ce qu'un volcan ?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Cuál es el país más grande de Sudamérica?\n2. ¿Qué idioma se habla allí?\n3. ¿Qué es un átomo?", [[0, 1], [2]]),
    ("zh", DEP, "1. 中国最长的河流是什么？\n2. 那里的人口有多少？\n3. 什么是量子力学？", [[0, 1], [2]]),
    ("zh", DEP, "1. 说出一个欧洲国家。\n2. 该国的首都是哪里？\n3. 月亮为什么会发光？", [[0, 1], [2]]),
    ("ja", DEP, "1. 好きな作家を一人教えてください。\n2. その人の代表作は？\n3. 月の重さは？", [[0, 1], [2]]),
    ("ko", DEP, "1. 아시아에서 가장 큰 나라는 어디인가요?\n2. 거기서는 어떤 언어를 쓰나요?\n3. 원자란 무엇인가요?", [[0, 1], [2]]),
    ("ko", DEP, "1. 서울의 인구는 얼마인가요?\n2. 그럼 부산은요?\n3. 원자란 무엇인가요?", [[0, 1], [2]]),
]  # fmt: skip
for lang, category, text, groups in dev13_more + dev13_code_and_cues:
    add(lang, category, text, groups)
# A fourth batch, written after the fixes prompted by held-out set 3 to check that they
# generalise (scored before the change it prompted: 0 of 20 dependent groups split
# apart, one German ranking list read as English and kept whole as a single part).
dev13_after_holdout3: list[tuple[str, str, str, list[list[int]]]] = [
    # instructions over lists whose items are not questions
    ("en", DEP, "Sort these animals from smallest to largest:\n1. Elephant\n2. Mouse\n3. Horse", [[0, 1, 2]]),
    ("en", DEP, "Pick one of these destinations for a honeymoon and tell me why:\n- Bali\n- Iceland\n- Kyoto", [[0, 1, 2]]),
    ("de", DEP, "Vergleiche diese drei Betriebssysteme:\n1. Linux\n2. Windows\n3. macOS", [[0, 1, 2]]),
    ("fr", DEP, "Range ces fruits du moins sucré au plus sucré :\n1. Citron\n2. Pomme\n3. Mangue", [[0, 1, 2]]),
    ("es", DEP, "Elige una de estas ciudades para vivir y explica por qué:\n1. Valencia\n2. Bilbao\n3. Sevilla", [[0, 1, 2]]),
    ("zh", DEP, "把下面的城市按人口从多到少排列：\n1. 成都\n2. 上海\n3. 西安", [[0, 1, 2]]),
    ("ja", DEP, "次の果物を甘い順に並べてください：\n1. りんご\n2. レモン\n3. マンゴー", [[0, 1, 2]]),
    ("ko", DEP, "다음 도시들을 인구가 많은 순서대로 나열해 주세요:\n1. 대구\n2. 서울\n3. 부산", [[0, 1, 2]]),
    ("en", DEP, "Write a poem in three stanzas:\n1. Morning on the river\n2. Noon in the market\n3. Night on the roof", [[0, 1, 2]]),
    ("zh", DEP, "写一个分为三部分的小故事：\n1. 小猫迷路了\n2. 小狗帮助了它\n3. 它们成了朋友", [[0, 1, 2]]),
    # independent pairs with a topic-shift marker
    ("en", "multi", "How long should I boil pasta? By the way, who invented the light bulb?", [[0], [1]]),
    ("de", "multi", "Wie lange kocht man Nudeln? Übrigens, wer hat die Glühbirne erfunden?", [[0], [1]]),
    ("ja", "multi", "パスタは何分ゆでればいいですか？ところで、電球を発明したのは誰ですか？", [[0], [1]]),
    ("ko", "multi", "파스타는 몇 분 삶아야 하나요? 그런데 전구는 누가 발명했나요?", [[0], [1]]),
    ("zh", "multi", "意大利面要煮几分钟？顺便问一下，电灯是谁发明的？", [[0], [1]]),
    # ordinals and letters
    ("zh", "multi", "第一，如何种植西红柿？第二，电动车的电池能用几年？", [[0], [1]]),
    ("ja", "multi", "第一に、紅茶の正しい淹れ方は？第二に、月の満ち欠けはなぜ起きますか？", [[0], [1]]),
    ("ko", "multi", "가) 비타민 D는 어디에 좋나요?\n나) 제주도에서 유명한 음식은 무엇인가요?", [[0], [1]]),
    # conjunction openers: whole questions vs ellipsis
    ("en", "multi", "What causes hiccups? Also, how far is Mars from the Sun? And who wrote The Hobbit?", [[0], [1], [2]]),
    ("en", DEP, "1. What is the population of Japan?\n2. And what is the capital?\n3. Who painted The Scream?", [[0, 1], [2]]),
    ("es", DEP, "1. ¿Cuál es la capital de Perú?\n2. ¿Y la moneda?\n3. ¿Quién pintó Las Meninas?", [[0, 1], [2]]),
    # requests that take the speaker, and references after them
    ("de", DEP, "1. Nenn mir eine berühmte Physikerin.\n2. Wofür hat sie den Nobelpreis bekommen?\n3. Was ist ein Photon?", [[0, 1], [2]]),
    ("fr", DEP, "1. Donne-moi le nom d'un grand peintre espagnol.\n2. Quel est son tableau le plus connu ?\n3. Qu'est-ce qu'un atome ?", [[0, 1], [2]]),
    ("es", DEP, "1. Dime el nombre de una escritora chilena.\n2. ¿Cuál es su libro más famoso?\n3. ¿Qué es la fotosíntesis?", [[0, 1], [2]]),
    # definite references in more shapes
    ("en", DEP, "1. Suggest a recipe for a rainy day.\n2. How long does the recipe take?\n3. Why is the ocean salty?", [[0, 1], [2]]),
    ("de", DEP, "1. Empfiehl mir eine Serie.\n2. Wie viele Staffeln hat die Serie?\n3. Wie hoch ist der Mount Everest?", [[0, 1], [2]]),
    ("fr", DEP, "1. Propose une recette végétarienne.\n2. Combien de temps prend cette recette ?\n3. Qui a écrit Candide ?", [[0, 1], [2]]),
    ("ko", DEP, "1. 간단한 요리를 하나 추천해 주세요.\n2. 그 요리는 몇 분 걸리나요?\n3. 태양은 몇 살인가요?", [[0, 1], [2]]),
    ("ja", DEP, "1. 簡単な料理を一つ教えてください。\n2. その料理は何分でできますか？\n3. 太陽の年齢は？", [[0, 1], [2]]),
    # independent lists that must still split
    ("en", "multi", "1. What is the word for 'cat' in Spanish?\n2. How many hours are in a year?\n3. Who discovered America?", [[0], [1], [2]]),
    ("fr", "multi", "1. Quel temps fait-il à Nice en mai ?\n2. Comment dit-on « merci » en japonais ?\n3. Qui a inventé le cinéma ?", [[0], [1], [2]]),
    ("es", "multi", "1. ¿Qué significa la palabra «saudade»?\n2. ¿Cuántos planetas hay en el sistema solar?\n3. ¿Cómo se prepara el gazpacho?", [[0], [1], [2]]),
    ("de", "multi", "1. Was bedeutet das Wort „Fernweh“?\n2. Wie viele Einwohner hat Wien?\n3. Warum ist der Himmel blau?", [[0], [1], [2]]),
    ("zh", "multi", "1. “内卷”这个词是什么意思？\n2. 北京有多少人口？\n3. 为什么海水是咸的？", [[0], [1], [2]]),
    # singles
    ("en", "single", "Which of these is the best gift for a ten-year-old: a bike, a tablet, or a telescope?", [[0]]),
    ("en", "single", "Proofread the following questions for my survey:\n1. How often do you exercize?\n2. What is you're favorite sport?", [[0]]),
    ("ja", "single", "次の質問を英語に翻訳してください。\n1. 駅はどこですか？\n2. いくらですか？", [[0]]),
    ("de", "single", "Hier ist mein Skript:\n\n    n = int(input())  # passt das?\n    print(n * 2)      # warum falsch?\n\nWarum bekomme ich einen Fehler bei Buchstaben?", [[0]]),
]  # fmt: skip
for lang, category, text, groups in dev13_after_holdout3:
    add(lang, category, text, groups)

# --- issue 27: development examples for the shapes people split by hand ---------------------
# Written for the rules of issue 27 before they were changed (question sentences after a
# shared instruction, connectives and headers in fourteen languages, several questions
# joined by "and", semicolon lists, inline and indented numbering, one request per line,
# lowercase run-on sentences, "؟", a code question followed by an unrelated one, lists
# under an instruction over all of them, markers to strip), with dependent and single
# prompts of the same shapes. None is taken from the held-out sets. ``parts`` are what
# each part must start with once its marker and connective are left out; ``shared`` is
# a piece of the instruction every part must be sent with.
MULTI = "multi"
dev27: list[tuple[str, str, str, list[list[int]], dict[str, Any]]] = [
    # a shared instruction, then question sentences in one paragraph
    ("en", MULTI, "Reply in French. What is the boiling point of mercury? How many moons does Mars have?", [[0], [1]], {"parts": ["What is the boiling point", "How many moons"], "shared": "Reply in French"}),
    ("en", MULTI, "Use metric units. How tall is the Burj Khalifa? How far is Lisbon from Madrid?", [[0], [1]], {"parts": ["How tall is", "How far is"], "shared": "Use metric units"}),
    ("en", MULTI, "Answer in one sentence each: Why is the sea salty? What does a kidney do? How do bees make honey?", [[0], [1], [2]], {"parts": ["Why is the sea", "What does a kidney", "How do bees"], "shared": "Answer in one sentence each"}),
    ("en", MULTI, "What year did the Berlin Wall fall? Who composed The Four Seasons? Keep each answer under ten words.", [[0], [1]], {"parts": ["What year did", "Who composed"], "shared": "Keep each answer"}),
    ("es", MULTI, "Responde en inglés, por favor. ¿Qué es la fotosíntesis? ¿Cómo funcionan las vacunas?", [[0], [1]], {"parts": ["¿Qué es la fotosíntesis", "¿Cómo funcionan"], "shared": "Responde en inglés"}),
    ("de", MULTI, "Bitte kurz antworten: Wie alt ist der Kölner Dom? Wer hat den Buchdruck erfunden?", [[0], [1]], {"parts": ["Wie alt ist", "Wer hat den Buchdruck"], "shared": "kurz antworten"}),
    ("fr", MULTI, "Réponds en une phrase. Pourquoi le ciel est-il bleu ? Qui a peint la Joconde ?", [[0], [1]], {"parts": ["Pourquoi le ciel", "Qui a peint"], "shared": "Réponds en une phrase"}),
    ("it", MULTI, "Rispondi in breve: qual è la capitale dell'Australia? Chi ha scritto I Promessi Sposi?", [[0], [1]], {"parts": ["qual è la capitale", "Chi ha scritto"], "shared": "Rispondi in breve"}),
    ("pt", MULTI, "Responda em poucas palavras. Qual é o maior rio do Brasil? Quem inventou o avião?", [[0], [1]], {"parts": ["Qual é o maior rio", "Quem inventou"], "shared": "Responda em poucas palavras"}),
    ("ru", MULTI, "Отвечай коротко. Сколько костей в теле человека? Кто написал роман «Война и мир»?", [[0], [1]], {"parts": ["Сколько костей", "Кто написал"], "shared": "Отвечай коротко"}),
    ("zh", MULTI, "请简要回答：光合作用是什么？地球到月球有多远？", [[0], [1]], {"parts": ["光合作用是什么", "地球到月球有多远"], "shared": "请简要回答"}),
    ("ja", MULTI, "簡潔に答えてください。富士山の高さは何メートルですか？日本で一番長い川は何ですか？", [[0], [1]], {"parts": ["富士山の高さ", "日本で一番長い川"], "shared": "簡潔に答えて"}),
    ("ko", MULTI, "짧게 대답해 주세요. 한국의 수도는 어디인가요? 물의 끓는점은 몇 도인가요?", [[0], [1]], {"parts": ["한국의 수도는", "물의 끓는점은"], "shared": "짧게 대답해"}),
    ("ar", MULTI, "أجب باختصار. ما هي عاصمة اليابان؟ كم عدد أيام السنة الكبيسة؟", [[0], [1]], {"parts": ["ما هي عاصمة", "كم عدد أيام"], "shared": "أجب باختصار"}),
    ("hi", MULTI, "संक्षेप में उत्तर दें। भारत की राजधानी क्या है? सूरज पूर्व से क्यों उगता है?", [[0], [1]], {"parts": ["भारत की राजधानी", "सूरज पूर्व से"], "shared": "संक्षेप में उत्तर दें"}),
    ("tr", MULTI, "Kısaca cevapla. Türkiye'nin en uzun nehri hangisi? Kediler neden mırlar?", [[0], [1]], {"parts": ["Türkiye'nin en uzun", "Kediler neden"], "shared": "Kısaca cevapla"}),
    ("hi-en", MULTI, "short me batao: python me list kaise sort karte hai? aur IPL 2023 kisne jeeta?", [[0], [1]], {"parts": ["python me list", "IPL 2023 kisne"], "shared": "short me batao"}),
    ("en", MULTI, "What is a neutron star?\nWhy do leaves change color in autumn?\nPlease answer like I'm ten years old.", [[0], [1]], {"parts": ["What is a neutron star", "Why do leaves"], "shared": "like I'm ten"}),
    ("es", MULTI, "¿Qué es el PIB? ¿Cómo se mide la inflación? Responde con ejemplos sencillos.", [[0], [1]], {"parts": ["¿Qué es el PIB", "¿Cómo se mide"], "shared": "Responde con ejemplos"}),
    # connectives
    ("es", MULTI, "¿Cuál es el río más largo de Europa? También, ¿quién descubrió la penicilina?", [[0], [1]], {"parts": ["¿Cuál es el río", "¿quién descubrió"]}),
    ("ru", MULTI, "Как приготовить борщ? И ещё: сколько лет Московскому Кремлю?", [[0], [1]], {"parts": ["Как приготовить борщ", "сколько лет"]}),
    ("ko", MULTI, "김치는 어떻게 만드나요? 그리고 서울에서 부산까지 KTX로 얼마나 걸리나요?", [[0], [1]], {"parts": ["김치는", "서울에서"]}),
    ("ja", MULTI, "カレーの作り方を教えてください。それと、東京タワーの高さは何メートルですか？", [[0], [1]], {"parts": ["カレーの作り方", "東京タワーの高さ"]}),
    ("zh", MULTI, "怎么煮米饭？还有，长江有多长？", [[0], [1]], {"parts": ["怎么煮米饭", "长江有多长"]}),
    ("pt", MULTI, "Qual é a capital do Canadá? E como se faz pão de queijo?", [[0], [1]], {"parts": ["Qual é a capital", "como se faz pão"]}),
    ("tr", MULTI, "Mercimek çorbası nasıl yapılır? Ayrıca, İstanbul'un nüfusu ne kadar?", [[0], [1]], {"parts": ["Mercimek çorbası", "İstanbul'un nüfusu"]}),
    ("hi-en", MULTI, "Mumbai me best vada pav kahan milta hai? Aur Taj Mahal kisne banwaya tha?", [[0], [1]], {"parts": ["Mumbai me best", "Taj Mahal kisne"]}),
    ("de", MULTI, "Zwei kurze Fragen: Wie hoch ist die Zugspitze? Und wer hat die Relativitätstheorie entwickelt?", [[0], [1]], {"parts": ["Wie hoch ist", "wer hat die Relativitätstheorie"]}),
    ("ar", MULTI, "سؤالان: ما هو أطول نهر في العالم؟ وكيف تعمل الألواح الشمسية؟", [[0], [1]], {"parts": ["ما هو أطول نهر", "كيف تعمل"]}),
    ("en", MULTI, "Explain what a hash map is. Also, who won the 2014 World Cup?", [[0], [1]], {"parts": ["Explain what a hash map", "who won the 2014"]}),
    ("fr", MULTI, "Donne-moi une recette de crêpes. Et aussi, quelle est la capitale du Kenya ?", [[0], [1]], {"parts": ["Donne-moi une recette", "quelle est la capitale"]}),
    ("it", MULTI, "Come si fa il tiramisù? Inoltre, quanti abitanti ha Milano?", [[0], [1]], {"parts": ["Come si fa", "quanti abitanti"]}),
    ("en", MULTI, "Two unrelated questions: What's the deepest lake in the world? How do I remove a wine stain?", [[0], [1]], {"parts": ["What's the deepest", "How do I remove"]}),
    ("es", MULTI, "Dos preguntas: ¿Cuántos huesos tiene un perro? ¿Qué idioma se habla en Brasil?", [[0], [1]], {"parts": ["¿Cuántos huesos", "¿Qué idioma"]}),
    ("fr", MULTI, "Deux questions rapides : Qui a inventé le vaccin contre la rage ? Quelle est la monnaie du Japon ?", [[0], [1]], {"parts": ["Qui a inventé", "Quelle est la monnaie"]}),
    ("it", MULTI, "Due domande veloci: come si coltiva il basilico? Chi ha dipinto la Primavera?", [[0], [1]], {"parts": ["come si coltiva", "Chi ha dipinto"]}),
    ("ko", MULTI, "질문 두 개요. 비빔밥에는 뭐가 들어가나요? 달까지의 거리는 얼마인가요?", [[0], [1]], {"parts": ["비빔밥에는", "달까지의"]}),
    ("en", MULTI, "First, what is the capital of Norway? Second, how many teeth does a shark have?", [[0], [1]], {"parts": ["what is the capital", "how many teeth"]}),
    ("fr", MULTI, "Premièrement, qui a écrit Germinal ? Deuxièmement, combien de pays compte l'Union européenne ?", [[0], [1]], {"parts": ["qui a écrit", "combien de pays"]}),
    # several questions in one sentence joined by "and"
    ("en", MULTI, "what is the capital of australia and who invented the telephone and how many legs does a spider have", [[0], [1], [2]], {"parts": ["what is the capital", "who invented", "how many legs"]}),
    ("en", MULTI, "Who wrote Frankenstein and what is the speed of sound in water and where is Timbuktu?", [[0], [1], [2]], {"parts": ["Who wrote", "what is the speed", "where is Timbuktu"]}),
    ("es", MULTI, "¿Quién pintó el Guernica y cuántos planetas hay en el sistema solar y dónde está Machu Picchu?", [[0], [1], [2]], {"parts": ["¿Quién pintó", "cuántos planetas", "dónde está"]}),
    # semicolon lists
    ("en", MULTI, "Quick facts please: capital of Mongolia; boiling point of ethanol; author of Moby-Dick", [[0], [1], [2]], {"parts": ["capital of Mongolia", "boiling point", "author of"]}),
    ("en", MULTI, "Define entropy; explain how a transistor works; name three Baroque composers", [[0], [1], [2]], {"parts": ["Define entropy", "explain how", "name three"]}),
    ("de", MULTI, "Erkläre kurz die Photosynthese; nenne drei Nebenflüsse des Rheins; wie hoch ist der Kilimandscharo?", [[0], [1], [2]], {"parts": ["Erkläre kurz", "nenne drei", "wie hoch"]}),
    # numbering inside a sentence
    ("en", MULTI, "Can you tell me 1) the height of Everest 2) who discovered gravity 3) how many hours are in a week", [[0], [1], [2]], {"parts": ["the height", "who discovered", "how many hours"]}),
    ("en", MULTI, "I'd like to know (1) what causes earthquakes, and (2) how long a day on Venus lasts?", [[0], [1]], {"parts": ["what causes earthquakes", "how long a day"]}),
    ("es", MULTI, "Quiero saber 1) cuánto mide la Torre Eiffel 2) quién escribió Cien años de soledad", [[0], [1]], {"parts": ["cuánto mide", "quién escribió"]}),
    # indented lists
    ("en", MULTI, "Questions for you:\n\t1. What is the largest desert?\n\t2. Who painted The Starry Night?\n\t3. What is the chemical symbol for gold?", [[0], [1], [2]], {"parts": ["What is the largest", "Who painted", "What is the chemical"]}),
    ("en", MULTI, "\t- How do magnets work?\n\t- What is a black hole?", [[0], [1]], {"parts": ["How do magnets", "What is a black hole"]}),
    ("de", MULTI, "    1. Wie funktioniert ein Kühlschrank?\n    2. Wer war Goethe?", [[0], [1]], {"parts": ["Wie funktioniert", "Wer war Goethe"]}),
    # one request per line, not every line a question
    ("en", MULTI, "What's the population of Tokyo?\nGive me a synonym for brave\nHow many strings does a violin have?", [[0], [1], [2]], {"parts": ["What's the population", "Give me a synonym", "How many strings"]}),
    ("en", MULTI, "Give me a synonym for happy\nWho was the first woman in space?", [[0], [1]], {"parts": ["Give me a synonym", "Who was the first woman"]}),
    ("ru", MULTI, "Сколько стоит билет на метро в Москве?\nНапиши короткое стихотворение про осень\nПочему небо голубое?", [[0], [1], [2]], {"parts": ["Сколько стоит", "Напиши короткое", "Почему небо"]}),
    # lowercase run-on sentences
    ("en", MULTI, "whats the best way to learn guitar. how do i make cold brew coffee. who won the nba finals in 2016", [[0], [1], [2]], {"parts": ["whats the best way", "how do i make", "who won the nba"]}),
    # "؟", and question sentences in Hindi and Russian
    ("ar", MULTI, "ما هي عاصمة أستراليا؟\nمن اخترع المصباح الكهربائي؟\nكم تبلغ سرعة الضوء؟", [[0], [1], [2]], {"parts": ["ما هي عاصمة", "من اخترع", "كم تبلغ"]}),
    ("ar", MULTI, "1. ما هو الذكاء الاصطناعي؟\n2. كيف أتعلم اللغة الإنجليزية بسرعة؟", [[0], [1]], {"parts": ["ما هو الذكاء", "كيف أتعلم"]}),
    ("ar", MULTI, "ما هو أكبر محيط في العالم؟ من كتب رواية البؤساء؟ متى بدأت الحرب العالمية الأولى؟", [[0], [1], [2]], {"parts": ["ما هو أكبر", "من كتب", "متى بدأت"]}),
    ("hi", MULTI, "ताजमहल किसने बनवाया? गंगा नदी कहाँ से निकलती है? क्रिकेट में कितने खिलाड़ी होते हैं?", [[0], [1], [2]], {"parts": ["ताजमहल किसने", "गंगा नदी", "क्रिकेट में"]}),
    ("hi", MULTI, "दिल्ली की जनसंख्या कितनी है?\nपानी का क्वथनांक क्या है?", [[0], [1]], {"parts": ["दिल्ली की", "पानी का"]}),
    ("ru", MULTI, "Кто изобрёл радио? Какая самая высокая гора в Европе? Как работает холодильник?", [[0], [1], [2]], {"parts": ["Кто изобрёл", "Какая самая", "Как работает"]}),
    ("ru", MULTI, "Что такое инфляция?\nКак быстро выучить английский язык?", [[0], [1]], {"parts": ["Что такое", "Как быстро"]}),
    # a code question, then an unrelated one
    ("en", MULTI, "Why does this throw a KeyError?\n```python\nd = {}\nprint(d['x'])\n```\nAlso, unrelated: what's a good name for a cat?", [[0], [1]], {"parts": ["Why does this throw", "what's a good name"]}),
    ("en", MULTI, "How do I read a CSV file with pandas?\n\n```python\nimport pandas as pd\n```\n\nSeparately, how do I back up a Postgres database?", [[0], [1]], {"parts": ["How do I read", "how do I back up"]}),
    # markers to strip
    ("en", MULTI, "🍕 What's the origin of pizza margherita?\n🚀 How fast does the ISS travel?\n🎸 Who invented the electric guitar?", [[0], [1], [2]], {"parts": ["What's the origin", "How fast", "Who invented"]}),
    ("en", MULTI, "**Question 1:** What is the tallest tree species?\n**Question 2:** How do solar panels work?", [[0], [1]], {"parts": ["What is the tallest", "How do solar"]}),
    # the same shapes with parts that lean on each other: never split apart
    ("en", DEP, "Reply in Spanish. Who painted the Sistine Chapel ceiling? How long did it take him?", [[0, 1]], {}),
    ("en", DEP, "What's the tallest building in Dubai? Also, how many floors does it have?", [[0, 1]], {}),
    ("es", DEP, "¿Quién fundó Apple? También, ¿en qué año murió?", [[0, 1]], {}),
    ("ru", DEP, "Кто написал «Мастера и Маргариту»? И ещё: в каком году он умер?", [[0, 1]], {}),
    ("pt", DEP, "Quem pintou a Mona Lisa? E onde ele nasceu?", [[0, 1]], {}),
    ("it", DEP, "Chi ha scoperto la penicillina? E in che anno è morto?", [[0, 1]], {}),
    ("tr", DEP, "Nutuk'u kim yazdı? Ayrıca onu ne zaman yazdı?", [[0, 1]], {}),
    ("ar", DEP, "من هو مؤسس شركة مايكروسوفت؟ وكم عمره الآن؟", [[0, 1]], {}),
    ("hi", DEP, "भारत के पहले प्रधानमंत्री कौन थे? उनका जन्म कहाँ हुआ था?", [[0, 1]], {}),
    ("hi-en", DEP, "Sachin Tendulkar ne kitni centuries banayi? Aur unka debut kab hua tha?", [[0, 1]], {}),
    ("zh", DEP, "《红楼梦》的作者是谁？还有，他是哪个朝代的人？", [[0, 1]], {}),
    ("ja", DEP, "『こころ』を書いたのは誰ですか？それと、彼はいつ生まれましたか？", [[0, 1]], {}),
    ("ko", DEP, "한글은 누가 만들었나요? 그리고 그것은 언제 만들어졌나요?", [[0, 1]], {}),
    ("en", DEP, "who discovered insulin and when did he win the nobel prize", [[0, 1]], {}),
    ("en", DEP, "Name a famous bridge in San Francisco; explain how it was built", [[0, 1]], {}),
    ("en", DEP, "Suggest a name for my bakery\nWrite a slogan that uses it", [[0, 1]], {}),
    ("en", DEP, "Tell me (1) who wrote Dune and (2) when it was first published", [[0, 1]], {}),
    ("en", DEP, "whats the capital of kenya. what is the population there", [[0, 1]], {}),
    ("en", DEP, "Translate 'good luck' into Japanese. Then explain each character.", [[0, 1]], {}),
    ("en", DEP, "What is the capital of Peru? What is its population?", [[0, 1]], {}),
    ("es", DEP, "¿Cuál es la montaña más alta de África? ¿Cuánto mide?", [[0, 1]], {}),
    ("de", DEP, "Wer hat das Auto erfunden? Und wann ist er gestorben?", [[0, 1]], {}),
    ("fr", DEP, "Qui a fondé la ville de Lyon ? Et quand est-ce que cela s'est passé ?", [[0, 1]], {}),
    ("en", DEP, "Two questions: Who discovered penicillin? Where did he work at the time?", [[0, 1]], {}),
    ("tr", DEP, "Türkiye'nin başkenti neresi? Nüfusu ne kadar?", [[0, 1]], {}),
    ("ru", DEP, "Какая самая длинная река в России? Какова её длина?", [[0, 1]], {}),
    # single prompts of the same shapes
    ("en", "single", "Can you make these survey questions more neutral? 1. Don't you agree our service is great? 2. How much did you love the food? 3. Wasn't the staff friendly?", ONE, {}),
    ("en", "single", "Write an FAQ page for my bakery that answers: Do you sell gluten-free bread? Are you open on Sundays? Can I order a custom cake?", ONE, {}),
    ("en", "single", "Create a quiz with these questions and four options each: What is the capital of Chile? Who painted Guernica? What is H2O?", ONE, {}),
    ("en", "single", "Grade my answers:\n1. The capital of France is Lyon.\n2. Water boils at 100 degrees.", ONE, {}),
    ("en", "single", "Should I (1) repaint the walls or (2) put up wallpaper in a small bedroom?", ONE, {}),
    ("en", "single", "How do I (1) install Node and (2) run a script with it on Windows?", ONE, {}),
    ("en", "single", "What is the difference between (1) a virus and (2) a bacterium?", ONE, {}),
    ("en", "single", "Write a limerick about a cat. Also, make it rhyme with 'hat'.", ONE, {}),
    ("en", "single", "Explain how vaccines work. Use simple words.", ONE, {}),
    ("en", "single", "Why is my sourdough so dense? What am I doing wrong?", ONE, {}),
    ("en", "single", "Is it safe to take ibuprofen with coffee? What are the side effects?", ONE, {}),
    ("en", "single", "I have a question about Python. How do I reverse a list?", ONE, {}),
    ("en", "single", "My cat keeps sneezing. Should I be worried? What should I do?", ONE, {}),
    ("en", "single", "Tell me about the French Revolution. Keep it short.", ONE, {}),
    ("en", "single", "Write a haiku about snow; make it sad; avoid the word 'cold'", ONE, {}),
    ("en", "single", "Plan a 3-day trip to Rome\nInclude cheap restaurants\nAvoid museums on Monday", ONE, {}),
    ("en", "single", "Reply in German. How do I say 'I am hungry'?", ONE, {}),
    ("en", "single", "Summarize the following article and list three key points:\n\nThe city council voted on Tuesday to expand the bike lane network. Critics say the plan is too expensive.", ONE, {}),
    ("en", "single", "how do i center a div. i tried flexbox but it doesnt work", ONE, {}),
    ("en", "single", "Compare Python and Java. Which one is faster?", ONE, {}),
    ("ru", "single", "Мой ноутбук сильно греется. Что делать? Стоит ли его чистить?", ONE, {}),
    ("tr", "single", "Bilgisayarım çok yavaş. Ne yapmalıyım? Format atmalı mıyım?", ONE, {}),
    ("ar", "single", "هاتفي لا يشحن. ما السبب؟ وهل يجب أن أغيّر البطارية؟", ONE, {}),
    ("hi-en", "single", "mera phone bahut garam ho raha hai, kya karun? battery change karni padegi kya?", ONE, {}),
    ("zh", "single", "我的电脑很慢，怎么办？要不要重装系统？", ONE, {}),
    ("it", "single", "Rispondi in italiano: come si dice 'good morning'?", ONE, {}),
    ("pt", "single", "Meu cachorro não come há dois dias. É grave? O que devo fazer?", ONE, {}),
    ("hi", "single", "मेरा फ़ोन बार-बार बंद हो जाता है। क्या करूँ? क्या बैटरी बदलनी पड़ेगी?", ONE, {}),
    ("de", "single", "Schreibe eine kurze Geschichte über einen Drachen. Sie soll lustig sein.", ONE, {}),
    ("es", "single", "Explícame la teoría de la relatividad. Usa un lenguaje sencillo, por favor.", ONE, {}),
]  # fmt: skip
for lang, category, text, groups, extra in dev27:
    add(lang, category, text, groups, **extra)

# A second batch, written after the rules above worked on the first: the same shapes in
# the languages added for issue 27, parts that lean on each other behind a cue (an
# instruction, a connective, a header), and single prompts that look like lists.
dev27_more: list[tuple[str, str, str, list[list[int]], dict[str, Any]]] = [
    # dependent parts behind a cue
    ("it", DEP, "Rispondi in breve. Chi ha dipinto la Gioconda? In che città è nato?", [[0, 1]], {}),
    ("it", DEP, "Due domande: chi ha scritto la Divina Commedia? Quando è morto?", [[0, 1]], {}),
    ("pt", DEP, "Seja breve. Quem descobriu o Brasil? Em que ano ele chegou lá?", [[0, 1]], {}),
    ("pt", DEP, "Qual é o maior país da América do Sul? Também, qual é a capital dele?", [[0, 1]], {}),
    ("ru", DEP, "Ответь кратко. Кто основал Санкт-Петербург? Когда он родился?", [[0, 1]], {}),
    ("ru", DEP, "Какой самый большой город Сибири? Также: сколько там жителей?", [[0, 1]], {}),
    ("tr", DEP, "Kısaca cevapla. Harry Potter kitaplarını kim yazdı? Onun ilk kitabı hangisi?", [[0, 1]], {}),
    ("tr", DEP, "Ankara ne zaman başkent oldu? Ayrıca orada kaç kişi yaşıyor?", [[0, 1]], {}),
    ("ar", DEP, "أجب باختصار. من اخترع الهاتف؟ وأين ولد؟", [[0, 1]], {}),
    ("ar", DEP, "ما هي أكبر مدينة في مصر؟ أيضاً، كم عدد سكانها؟", [[0, 1]], {}),
    ("hi", DEP, "संक्षेप में बताइए। ताजमहल किसने बनवाया? उसे बनाने में कितने साल लगे?", [[0, 1]], {}),
    ("hi", DEP, "भारत की सबसे लंबी नदी कौन सी है? और वह कहाँ से निकलती है?", [[0, 1]], {}),
    ("hi-en", DEP, "short me batao: Virat Kohli ka birthday kab hai? aur uski wife kaun hai?", [[0, 1]], {}),
    ("hi-en", DEP, "Python kisne banaya? Aur usne ye kab release kiya?", [[0, 1]], {}),
    ("en", DEP, "Be brief. Who invented the telephone? Where was he born?", [[0, 1]], {}),
    ("en", DEP, "Quick questions: what's the capital of Australia? what's the population there?", [[0, 1]], {}),
    ("en", DEP, "Use simple words. What is a black hole? How does it form?", [[0, 1]], {}),
    ("en", DEP, "Name the longest river in Africa. Also, which countries does it flow through?", [[0, 1]], {}),
    ("en", DEP, "Write a short poem about autumn. Then translate it into French.", [[0, 1]], {}),
    ("en", DEP, "Give me three names for a cat. Also, which one is the most popular?", [[0, 1]], {}),
    ("en", DEP, "Be brief. How do I make a sourdough starter? How long does it take?", [[0, 1]], {}),
    ("en", DEP, "Be brief. How long should I bake a lasagna? At what temperature?", [[0, 1]], {}),
    ("en", DEP, "Keep it short. Is it safe to eat raw cookie dough? What are the risks?", [[0, 1]], {}),
    ("de", DEP, "Antworte kurz. Wer hat Faust geschrieben? Wann wurde er geboren?", [[0, 1]], {}),
    ("fr", DEP, "Réponds brièvement. Qui a écrit Candide ? Où est-il né ?", [[0, 1]], {}),
    ("es", DEP, "Responde en una frase. ¿Quién escribió Cien años de soledad? ¿Dónde vivía?", [[0, 1]], {}),
    ("zh", DEP, "请简要回答：谁发明了电话？他是哪国人？", [[0, 1]], {}),
    ("ja", DEP, "簡潔に答えてください。電球を発明したのは誰ですか？彼はどこの国の人ですか？", [[0, 1]], {}),
    ("ko", DEP, "짧게 답해 주세요. 전화기는 누가 발명했나요? 그는 어느 나라 사람인가요?", [[0, 1]], {}),
    ("en", DEP, "Who directed Jaws?\nWhat other films did he make?", [[0, 1]], {}),
    ("en", DEP, "who wrote the odyssey and when was it written and where is ithaca", [[0, 1], [2]], {"parts": ["who wrote the odyssey", "when was it written", "where is ithaca"]}),
    ("en", DEP, "Define photosynthesis; explain why it matters; name a plant that stores water in its leaves", [[0, 1], [2]], {"parts": ["Define photosynthesis", "explain why it matters", "name a plant"]}),
    ("en", DEP, "Who is the CEO of Tesla? Is he also the CEO of SpaceX?", [[0, 1]], {}),
    # independent parts in the added languages and shapes
    ("it", MULTI, "Qual è la capitale del Canada?\nChi ha inventato la radio?\nQuanto è alto il Monte Bianco?", [[0], [1], [2]], {"parts": ["Qual è la capitale", "Chi ha inventato", "Quanto è alto"]}),
    ("it", MULTI, "Chi ha scritto l'Odissea? Quanti abitanti ha Roma? Come funziona un vulcano?", [[0], [1], [2]], {"parts": ["Chi ha scritto", "Quanti abitanti", "Come funziona"]}),
    ("pt", MULTI, "1. O que é inflação?\n2. Quem foi Pelé?", [[0], [1]], {"parts": ["O que é inflação", "Quem foi Pelé"]}),
    ("pt", MULTI, "Como faço arroz soltinho? Além disso, qual é a moeda do Japão?", [[0], [1]], {"parts": ["Como faço arroz", "qual é a moeda"]}),
    ("ru", MULTI, "Два вопроса: как работает GPS? И почему небо голубое?", [[0], [1]], {"parts": ["как работает GPS", "почему небо"]}),
    ("tr", MULTI, "Everest dağı kaç metre? Mozart hangi ülkede doğdu? Fotosentez nedir?", [[0], [1], [2]], {"parts": ["Everest dağı", "Mozart hangi", "Fotosentez nedir"]}),
    ("tr", MULTI, "Türkçe cevapla. Işık hızı nedir? Kahve nereden gelir?", [[0], [1]], {"parts": ["Işık hızı", "Kahve nereden"], "shared": "Türkçe cevapla"}),
    ("ar", MULTI, "كيف أطبخ الأرز؟ أيضاً، من هو مؤلف كتاب الأمير؟", [[0], [1]], {"parts": ["كيف أطبخ", "من هو مؤلف"]}),
    ("ar", MULTI, "أجب بجملة واحدة. ما هو الضوء؟ لماذا ماء البحر مالح؟", [[0], [1]], {"parts": ["ما هو الضوء", "لماذا ماء البحر"], "shared": "أجب بجملة واحدة"}),
    ("hi", MULTI, "चाय कैसे बनाते हैं? साथ ही, चाँद पृथ्वी से कितनी दूर है?", [[0], [1]], {"parts": ["चाय कैसे", "चाँद पृथ्वी"]}),
    ("hi", MULTI, "भारत में कितने राज्य हैं?\nक्रिकेट का आविष्कार किसने किया?\nबारिश क्यों होती है?", [[0], [1], [2]], {"parts": ["भारत में", "क्रिकेट का", "बारिश क्यों"]}),
    ("hi-en", MULTI, "ek line me answer do: Bitcoin kya hai? Aur GST kab laagu hua tha?", [[0], [1]], {"parts": ["Bitcoin kya hai", "GST kab"], "shared": "ek line me answer do"}),
    ("hi-en", MULTI, "Shimla me kya dekhna chahiye?\nDelhi se Jaipur kitni door hai?", [[0], [1]], {"parts": ["Shimla me", "Delhi se Jaipur"]}),
    ("en", MULTI, "Recommend a good laptop for students. Also, how do I clean a keyboard?", [[0], [1]], {"parts": ["Recommend a good laptop", "how do I clean"]}),
    ("en", MULTI, "Quick ones: how many ounces are in a pound? who painted the Sistine Chapel ceiling?", [[0], [1]], {"parts": ["how many ounces", "who painted"]}),
    ("en", MULTI, "What's a good beginner camera? Separately, how do I remove rust from a bike chain?", [[0], [1]], {"parts": ["What's a good beginner", "how do I remove rust"]}),
    ("en", MULTI, "**Q1:** What is the speed of light?\n**Q2:** Who discovered penicillin?", [[0], [1]], {"parts": ["What is the speed", "Who discovered"]}),
    ("en", MULTI, "🌋 How do volcanoes form?\n🐝 Why are bees important?", [[0], [1]], {"parts": ["How do volcanoes", "Why are bees"]}),
    ("en", MULTI, "Three quick ones: (1) what's the tallest animal, (2) how many bones does a shark have, and (3) who invented the bicycle?", [[0], [1], [2]], {"parts": ["what's the tallest", "how many bones", "who invented the bicycle"]}),
    ("en", MULTI, "What's the capital of Chile; how far is Mars; who wrote Dracula?", [[0], [1], [2]], {"parts": ["What's the capital", "how far is Mars", "who wrote Dracula"]}),
    ("en", MULTI, "\t1) What is DNA?\n\t2) Who was Marie Curie?", [[0], [1]], {"parts": ["What is DNA", "Who was Marie Curie"]}),
    ("en", MULTI, "Who built Stonehenge?\nWhy is the Dead Sea salty?\n\nKeep answers under 50 words.", [[0], [1]], {"parts": ["Who built", "Why is the Dead Sea"], "shared": "Keep answers under 50 words"}),
    ("en", MULTI, "Explain how a bill becomes law. Also, what's the best way to learn to juggle?", [[0], [1]], {"parts": ["Explain how a bill", "what's the best way"]}),
    ("en", MULTI, "Why does my loop never end?\n\nwhile i < 10:\n    print(i)\n\nAlso unrelated - what's the capital of Canada?", [[0], [1]], {"parts": ["Why does my loop", "what's the capital"]}),
    # single prompts that look like several
    ("en", "single", "Explain the difference between TCP and UDP. Which one should I use for video streaming?", ONE, {}),
    ("en", "single", "Can you proofread this? Their going to the store tomorrow. Is it correct?", ONE, {}),
    ("en", "single", "What's the weather like in Paris in April? Should I pack an umbrella?", ONE, {}),
    ("en", "single", "Write a cover letter for a junior developer job. Mention my internship at a bank.", ONE, {}),
    ("en", "single", "Translate into French: Where is the station? How much is a ticket? When does the train leave?", ONE, {}),
    ("en", "single", "Can you tell me: what time is it in Tokyo right now?", ONE, {}),
    ("en", "single", "Is 17 a prime number? Is 21?", ONE, {}),
    ("en", "single", "Which is bigger, the sun or the moon? Why?", ONE, {}),
    ("en", "single", "How do I make a sourdough starter? How long does it take?", ONE, {}),
    ("en", "single", "My flight got cancelled. Can I get a refund? Who do I contact?", ONE, {}),
    ("es", "single", "Traduce al inglés: ¿Dónde está el baño? ¿Cuánto cuesta? ¿A qué hora abre?", ONE, {}),
    ("de", "single", "Übersetze ins Englische: Wo ist der Bahnhof? Wann fährt der Zug? Was kostet das Ticket?", ONE, {}),
    ("ru", "single", "Переведи на английский: Где вокзал? Сколько стоит билет? Когда отходит поезд?", ONE, {}),
]  # fmt: skip
for lang, category, text, groups, extra in dev27_more:
    add(lang, category, text, groups, **extra)

# A third batch, written as a check before the rules were tuned on it and scored once
# (23 of 27 multi-part prompts split exactly, 15 of 16 single prompts whole, 1 dependent
# pair split apart: "E quando è uscito il libro?" after a name), then used for
# development like the rest.
dev27_check: list[tuple[str, str, str, list[list[int]], dict[str, Any]]] = [
 ("en", MULTI, "Answer briefly: How many teeth does an adult human have? What is the capital of Kenya? Who wrote Pride and Prejudice?", [[0],[1],[2]], {"shared": "Answer briefly"}),
 ("en", MULTI, "Please respond in German. What is a leap year? Why do we have time zones?", [[0],[1]], {"shared": "respond in German"}),
 ("en", MULTI, "Hey, two things: how do I unclog a drain? and what's a good gift for a 10 year old?", [[0],[1]], {}),
 ("en", MULTI, "Can you help me with a few things? First, what's a good name for a goldfish? Second, how do I fold a fitted sheet?", [[0],[1]], {}),
 ("en", MULTI, "what does DNS stand for. how many continents are there. who is the president of France", [[0],[1],[2]], {}),
 ("en", MULTI, "Explain recursion in one paragraph. Also: what's the difference between a virus and bacteria?", [[0],[1]], {}),
 ("es", MULTI, "¿Cuántos años tiene la Tierra? Además, ¿cómo se dice 'gracias' en japonés?", [[0],[1]], {}),
 ("de", MULTI, "Wie viele Bundesländer hat Deutschland? Außerdem: Wer hat die Glühbirne erfunden?", [[0],[1]], {}),
 ("fr", MULTI, "Combien de temps faut-il pour apprendre le piano ? Par ailleurs, quelle est la plus haute montagne d'Afrique ?", [[0],[1]], {}),
 ("it", MULTI, "Quanto costa un biglietto del treno da Roma a Milano? E chi ha inventato il telefono?", [[0],[1]], {}),
 ("pt", MULTI, "Quantos ossos tem o corpo humano? Também queria saber quem escreveu Os Lusíadas.", [[0],[1]], {}),
 ("ru", MULTI, "Сколько планет в Солнечной системе? Кстати, как приготовить блины?", [[0],[1]], {}),
 ("tr", MULTI, "Kedi maması nasıl seçilir? Bir de, Kapadokya'ya ne zaman gitmeli?", [[0],[1]], {}),
 ("ar", MULTI, "كم عدد الكواكب في المجموعة الشمسية؟ وبالمناسبة، كيف أتعلم الطبخ؟", [[0],[1]], {}),
 ("hi", MULTI, "पृथ्वी सूर्य से कितनी दूर है? और, चावल कैसे पकाते हैं?", [[0],[1]], {}),
 ("hi-en", MULTI, "yaar, Goa me best beach konsa hai? aur Manali kab jana chahiye?", [[0],[1]], {}),
 ("zh", MULTI, "请用中文回答：什么是区块链？为什么天空是蓝色的？", [[0],[1]], {"shared": "请用中文回答"}),
 ("ja", MULTI, "日本語で答えてください。東京の人口は？大阪の名物は何ですか？", [[0],[1]], {"shared": "日本語で答えて"}),
 ("ko", MULTI, "짧게 설명해 주세요. 블록체인이 뭔가요? 그리고 비트코인은 누가 만들었나요?", [[0],[1]], {"shared": "짧게 설명해"}),
 ("en", MULTI, "Quick facts: tallest building in Europe; fastest land animal; largest ocean", [[0],[1],[2]], {}),
 ("en", MULTI, "Need help: (1) best way to store fresh basil, (2) how long to boil an egg", [[0],[1]], {}),
 ("en", MULTI, "- how do I center a div\n- what's the difference between let and const\n- why is my fetch returning undefined", [[0],[1],[2]], {}),
 ("es", MULTI, "• ¿Qué es el ADN?\n• ¿Quién fue Simón Bolívar?", [[0],[1]], {}),
 ("en", MULTI, "🔥 Why is fire hot?\n❄️ Why is ice slippery?", [[0],[1]], {}),
 ("en", MULTI, "Q1 - What is GDP?\nQ2 - What is inflation?", [[0],[1]], {}),
 ("en", MULTI, "Question: What is the speed of sound? Another question: Who invented the piano?", [[0],[1]], {}),
 ("en", MULTI, "What's 15% of 80? Also what's the square root of 144?", [[0],[1]], {}),
 ("en", DEP, "1) What is Kubernetes 2) What is Docker 3) How are they different", [[0,1,2]], {}),
 ("en", DEP, "Who was the first person on the moon? What year did that happen?", [[0,1]], {}),
 ("en", DEP, "Recommend a fantasy book for teens. Also, is there a movie version of it?", [[0,1]], {}),
 ("en", DEP, "Explain what an API is. Then give me an example in Python.", [[0,1]], {}),
 ("es", DEP, "¿Quién ganó el Mundial 2010? ¿Quién fue el goleador de ese torneo?", [[0,1]], {}),
 ("de", DEP, "Wer war Mozart? Und welche Opern hat er komponiert?", [[0,1]], {}),
 ("fr", DEP, "Qui a peint Guernica ? Et dans quel musée se trouve ce tableau ?", [[0,1]], {}),
 ("it", DEP, "Chi ha fondato la Ferrari? E in che anno l'ha fondata?", [[0,1]], {}),
 ("pt", DEP, "Quem foi Santos Dumont? E o que ele inventou?", [[0,1]], {}),
 ("ru", DEP, "Кто написал «Евгения Онегина»? И сколько ему было лет?", [[0,1]], {}),
 ("tr", DEP, "Nasreddin Hoca kimdir? Onun en ünlü fıkrası hangisi?", [[0,1]], {}),
 ("ar", DEP, "من هو نجيب محفوظ؟ وما أشهر رواياته؟", [[0,1]], {}),
 ("hi", DEP, "महात्मा गांधी कौन थे? उनकी मृत्यु कब हुई?", [[0,1]], {}),
 ("hi-en", DEP, "ChatGPT kisne banaya? Aur wo kab launch hua?", [[0,1]], {}),
 ("zh", DEP, "谁写了《西游记》？这本书讲了什么？", [[0,1]], {}),
 ("ja", DEP, "『ハリー・ポッター』の作者は誰ですか？その人はどこの出身ですか？", [[0,1]], {}),
 ("ko", DEP, "세종대왕은 누구인가요? 그의 업적은 무엇인가요?", [[0,1]], {}),
 ("en", DEP, "Answer in one word each: what's the capital of Japan? and its currency?", [[0,1]], {}),
 ("en", DEP, "Name a famous painter from Spain and tell me his most famous work", [[0,1]], {}),
 ("en", DEP, "Reply in French. Who discovered radium? Also, where did she study?", [[0,1]], {}),
 ("ru", DEP, "Ответь коротко. Кто изобрёл телефон? И где он жил?", [[0,1]], {}),
 ("it", DEP, "Rispondi in breve. Chi ha scritto Pinocchio? E quando è uscito il libro?", [[0,1]], {}),
 ("pt", DEP, "Duas perguntas: quem fundou a Apple? E quando ela foi fundada?", [[0,1]], {}),
 ("en", "single", "Is it better to learn Python or JavaScript first? Why?", ONE, {}),
 ("en", "single", "I have a job interview tomorrow. What should I wear? Should I bring anything?", ONE, {}),
 ("en", "single", "What are the pros and cons of electric cars? Which ones would you recommend?", ONE, {}),
 ("en", "single", "Write a haiku about the ocean. Make it melancholic.", ONE, {}),
 ("en", "single", "Please review my code and tell me: is it efficient? is it readable? could it be shorter?", ONE, {}),
 ("en", "single", "Which is healthier: brown rice or white rice?", ONE, {}),
 ("en", "single", "Do you know what time it is in London? And in New York?", ONE, {}),
 ("en", "single", "Rank these: What is 2+2? What is the meaning of life? What is 10 factorial?", ONE, {}),
 ("en", "single", "Make a quiz from these questions: What is H2O? What is NaCl?", ONE, {}),
 ("en", "single", "Correct my grammar: Where you go yesterday? What you eat for dinner?", ONE, {}),
 ("en", "single", "Tell me about yourself. What can you do? What are your limits?", ONE, {}),
 ("es", "single", "Tengo fiebre desde ayer. ¿Debo ir al médico? ¿Qué puedo tomar?", ONE, {}),
 ("de", "single", "Mein Auto macht komische Geräusche. Was kann das sein? Ist es gefährlich?", ONE, {}),
 ("ru", "single", "У меня болит голова. Что делать? Какие таблетки принять?", ONE, {}),
 ("hi-en", "single", "mera laptop slow ho gaya hai. kya karu? RAM badhani chahiye kya?", ONE, {}),
 ("tr", "single", "Telefonum çok ısınıyor. Bu normal mi? Ne yapmalıyım?", ONE, {}),
]  # fmt: skip
for lang, category, text, groups, extra in dev27_check:
    add(lang, category, text, groups, **extra)

# A fourth batch, written after the first scoring of held-out set 4 for the general
# fixes it prompted (pairs of questions with no cue held, greetings and "couple of
# things" headers, "In one word each:", questions separated by commas, markdown section
# headings, "・" without a space, unaccented Spanish question words, SQL outside fences,
# "is it ... for", "how many X ... its", short Arabic questions); none is taken from it.
dev27_after_holdout4: list[tuple[str, str, str, list[list[int]], dict[str, Any]]] = [
    ("en", MULTI, "Hi! A couple of things: how do I descale a kettle, and what's the capital of Ghana?", [[0], [1]], {"parts": ["how do I descale", "what's the capital"]}),
    ("en", MULTI, "In two words each: what is the largest planet, what gas do plants absorb, and who wrote Hamlet?", [[0], [1], [2]], {"parts": ["what is the largest", "what gas do plants", "who wrote Hamlet"], "shared": "In two words each"}),
    ("en", MULTI, "## Health\nHow much water should I drink a day?\n\n## Tech\nHow do I reset my router?", [[0], [1]], {"parts": ["How much water", "How do I reset"]}),
    ("ja", MULTI, "・日本の首都はどこですか？\n・富士山の高さは何メートルですか？", [[0], [1]], {"parts": ["日本の首都", "富士山の高さ"]}),
    ("es", MULTI, "cuantos años tiene la tierra y quien invento el telefono y donde queda machu picchu", [[0], [1], [2]], {"parts": ["cuantos años tiene", "quien invento", "donde queda"]}),
    ("ar", MULTI, "- ما فوائد القهوة؟\n- كم يبلغ طول نهر النيل؟", [[0], [1]], {"parts": ["ما فوائد القهوة", "كم يبلغ طول"]}),
    ("en", "single", "Is this query OK?\nSELECT id FROM users WHERE email = ?;\nThe ? gets replaced by the driver.", ONE, {}),
    ("en", "single", "Can you explain how compound interest works? Like, why does the balance grow faster later?", ONE, {}),
    ("es", "single", "¿Es caro vivir en Lisboa? ¿Qué barrios recomiendas?", ONE, {}),
    ("tr", "single", "Kedi mi köpek mi daha kolay bakılır? Hangisini önerirsin?", ONE, {}),
    ("en", DEP, "Which planet has the most moons?\nWhat is it mostly made of?", [[0, 1]], {}),
    ("en", DEP, "Who founded Tesla Motors?\nHow many employees did its first factory have?", [[0, 1]], {}),
    ("it", DEP, "Chi ha dipinto la Cappella Sistina? In che anno è nato?", [[0, 1]], {}),
]  # fmt: skip
for lang, category, text, groups, extra in dev27_after_holdout4:
    add(lang, category, text, groups, **extra)

OUT.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")
print(f"{len(entries)} prompts written to {OUT}")

# --- a held-out set, written after the rules were tuned on the set above and scored
# once before any further change (see benchmarks/README.md for both figures) -------------
HOLDOUT = Path(__file__).with_name("detection_holdout.jsonl")
held: list[dict[str, Any]] = []


def hold(lang: str, category: str, text: str, groups: list[list[int]], **extra: Any) -> None:
    held.append({"id": f"holdout-{category}-{len(held):03d}", "lang": lang, "category": category,
                 "text": text, "groups": groups, **extra})  # fmt: skip


for lang, text in [
    ("en", "How long should I boil an egg for a runny yolk?"),
    ("en", "Which is heavier?\n1) a kilo of feathers\n2) a kilo of steel"),
    (
        "en",
        "Proofread this list for typos:\n1. Recieve the package\n2. Seperate the items\n3. Acknowlege receipt",
    ),
    (
        "en",
        "I'm planning a trip with these stops:\n- Rome\n- Florence\n- Venice\nHow many days should I spend in each?",
    ),
    ("en", "Is it safe to eat raw cookie dough? What are the risks?"),
    (
        "en",
        "Please explain this error: `TypeError: 'NoneType' object is not subscriptable`. What usually causes it?",
    ),
    (
        "en",
        "Step 1: preheat the oven. Step 2: mix flour and sugar. Step 3: bake for 20 minutes. Did I forget anything?",
    ),
    (
        "en",
        "Rewrite the following in a formal tone:\n1. gonna be late, sorry\n2. can u send the file\n3. thx a lot",
    ),
    (
        "en",
        "What do you think about this poem?\n\nRoses are red,\nViolets are blue,\nWhy is the sky\nNot green too?",
    ),
    ("en", "Is Python interpreted or compiled?"),
    ("zh", "请帮我把这段话翻译成英文：我今天很忙，明天再联系你。"),
    ("zh", "以下哪种动物是哺乳动物？\nA. 鲨鱼\nB. 海豚\nC. 章鱼"),
    ("zh", "怎么学好英语？有什么好的方法吗？"),
    ("ja", "おすすめの本を教えてください。できればミステリーがいいです。"),
    ("ko", "오늘 저녁 메뉴 추천해 줄 수 있어? 매운 음식이 좋아."),
    ("es", "¿Cómo se hace una tortilla de patatas? ¿Lleva cebolla?"),
    ("de", "Bitte fasse diesen Text zusammen:\n1. Einleitung\n2. Hauptteil\n3. Schluss"),
]:
    hold(lang, "single", text, ONE)

for lang, text, n in [
    (
        "en",
        "1. What causes earthquakes?\n2. How is the Richter scale defined?\n3. Where is the Ring of Fire?",
        3,
    ),
    (
        "en",
        "Some quick ones for you:\n- How many bones are in the human body?\n- What is the chemical formula of table salt?\n- Who was the first person on the Moon?",
        3,
    ),
    (
        "en",
        "Q1) What is an index in a database?\nQ2) What is normalization?\nQ3) What is a foreign key?",
        3,
    ),
    (
        "en",
        "How do I center a div in CSS?\nWhat is the difference between let and const in JavaScript?",
        2,
    ),
    (
        "en",
        "1. Suggest a name for a bakery.\n2. Explain how yeast makes bread rise.\n3. What is the origin of the croissant?\n4. Give me a recipe for banana bread.",
        4,
    ),
    (
        "en",
        "Answer the following questions:\na. What is inertia?\nb. What is friction?\nc. What is momentum?",
        3,
    ),
    (
        "en",
        "What is the capital of Kenya? Who is the author of 1984? How many continents are there?",
        3,
    ),
    ("zh", "1. Python 中的列表和元组有什么区别？\n2. 什么是装饰器？\n3. 如何处理异常？", 3),
    ("zh", "问题1：什么是云计算？\n问题2：什么是边缘计算？", 2),
    ("zh", "（一）什么是通货膨胀？\n（二）利率如何影响经济？", 2),
    ("ja", "1) 日本の人口は？\n2) 東京タワーの高さは？\n3) 日本の国花は何ですか？", 3),
    ("ko", "질문 1: 인공지능이란 무엇인가요?\n질문 2: 머신러닝과 딥러닝의 차이는 무엇인가요?", 2),
    ("ko", "1) 비타민 C가 많은 과일은 무엇인가요?\n2) 하루 물 섭취 권장량은 얼마인가요?", 2),
    ("fr", "- Quelle est la capitale du Canada ?\n- Qui a peint La Joconde ?", 2),
    ("es", "a) ¿Qué es un átomo?\nb) ¿Qué es una molécula?\nc) ¿Qué es un ion?", 3),
    ("de", "Frage 1: Was ist Photosynthese?\nFrage 2: Warum ist der Himmel blau?", 2),
]:
    hold(lang, "multi", text, [[i] for i in range(n)])

for lang, text, groups in [
    (
        "en",
        "1. Name a famous novel by Tolstoy.\n2. When was it published?\n3. What is the capital of Norway?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Invent a name for a fantasy city.\n2. Describe its history in two sentences.\n3. Why do we have leap years?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. Give me a random prime under 50.\n2. Multiply that number by 3.\n3. What is the tallest animal?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. What is the GDP of Japan?\n2. And the GDP of Germany?\n3. Which of the two is larger, based on the above?",
        [[0, 1, 2]],
    ),
    ("zh", "1. 推荐一部电影。\n2. 这部电影讲了什么？\n3. 月球离地球多远？", [[0, 1], [2]]),
    (
        "ko",
        "1. 좋아하는 계절을 하나 골라 주세요.\n2. 그 계절의 특징은 무엇인가요?\n3. 태양계에서 가장 큰 행성은?",
        [[0, 1], [2]],
    ),
    (
        "ja",
        "1. 好きな果物を一つ挙げてください。\n2. その果物の栄養は？\n3. 富士山の高さは？",
        [[0, 1], [2]],
    ),
]:
    hold(lang, "dependent", text, groups)

for lang, text, n, pre in [
    (
        "en",
        "Product description: The X200 vacuum has a 2-hour battery, weighs 3 kg and costs $299.\n\n1. How long does the battery last?\n2. How much does it weigh?\n3. What is the price?",
        3,
        "X200",
    ),
    (
        "en",
        "Email from Sam: 'The launch moves to Friday; marketing needs the copy by Wednesday.'\n\n- When is the launch?\n- When is the copy due?",
        2,
        "Sam",
    ),
    (
        "zh",
        "背景：小明每天早上六点起床，七点去学校，下午五点回家。\n\n1. 小明几点起床？\n2. 小明几点回家？",
        2,
        "小明",
    ),
]:
    hold(lang, "shared", text, [[i] for i in range(n)], preamble=pre)

HOLDOUT.write_text(
    "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in held), encoding="utf-8"
)
print(f"{len(held)} held-out prompts written to {HOLDOUT}")

# --- a second held-out set, written after the fixes prompted by the first one and
# scored once, with no change to the rules afterwards -------------------------------------
HOLDOUT2 = Path(__file__).with_name("detection_holdout2.jsonl")
held2: list[dict[str, Any]] = []


def hold2(lang: str, category: str, text: str, groups: list[list[int]], **extra: Any) -> None:
    held2.append({"id": f"holdout2-{category}-{len(held2):03d}", "lang": lang, "category": category,
                  "text": text, "groups": groups, **extra})  # fmt: skip


for lang, text in [
    ("en", "Can dogs eat grapes? My dog just ate two."),
    ("en", "What's the best way to learn piano as an adult? Should I get a teacher?"),
    ("en", "Given these numbers:\n1. 14\n2. 27\n3. 39\nwhich are divisible by 3?"),
    (
        "en",
        "Help me plan a workout:\n- Monday: legs\n- Wednesday: arms\n- Friday: cardio\nIs this balanced?",
    ),
    ("en", "Explain the code below.\n```\nfor i in range(3):\n    print(i)\n```"),
    ("en", "Grade these answers to 'What is 7 x 8?':\n1. 54\n2. 56\n3. 58"),
    (
        "en",
        "My essay outline is:\nI. Introduction\nII. Arguments\nIII. Conclusion\nHow can I make it stronger?",
    ),
    ("en", "Which is the right word here: 'affect' or 'effect'? 'The rain will ___ the game.'"),
    ("zh", "这个句子有语病吗？“通过这次活动，使我们受到了教育。”"),
    ("zh", "我想去日本旅游，有什么推荐的路线？预算大概一万元。"),
    ("ja", "このメールを丁寧な表現に直してください。「明日行けません。すみません。」"),
    ("ko", '다음 문장을 자연스럽게 고쳐 주세요: "나는 어제 학교에 가았다."'),
    ("es", '¿Qué opinas de este título para mi libro: "El último verano"?'),
    ("fr", "Comment dit-on « bonjour » en japonais ?"),
]:
    hold2(lang, "single", text, ONE)

for lang, text, n in [
    ("en", "1. What is a black hole?\n2. How are stars formed?\n3. What is dark matter?", 3),
    (
        "en",
        "Three unrelated questions:\n- What is the boiling point of olive oil?\n- Who composed the Four Seasons?\n- How many players are on a rugby team?",
        3,
    ),
    ("en", "(a) Define osmosis.\n(b) Define diffusion.\n(c) Give one example of each.", 2),
    ("en", "Q1. What is TCP?\nQ2. What is UDP?", 2),
    ("en", "How tall is the Eiffel Tower? When was the Colosseum built? Where is Machu Picchu?", 3),
    ("zh", "1）什么是量子计算？\n2）什么是量子纠缠？", 2),
    ("zh", "请分别回答：\n1. 中国有多少个省份？\n2. 长城有多长？\n3. 故宫建于哪一年？", 3),
    ("ja", "①東京の人口は？\n②大阪の名物は？\n③京都の有名な寺は？", 3),
    (
        "ko",
        "1. 한국의 전통 음식은 무엇인가요?\n2. 설날에는 무엇을 하나요?\n3. 한복은 언제 입나요?",
        3,
    ),
    ("es", "1) ¿Qué es la inflación?\n2) ¿Qué es el PIB?", 2),
]:
    if lang == "en" and text.startswith("(a)"):
        hold2(lang, "dependent", text, [[0, 1, 2]])  # "each" refers to both (a) and (b)
    else:
        hold2(lang, "multi", text, [[i] for i in range(n)])

for lang, text, groups in [
    (
        "en",
        "1. Suggest a title for a mystery novel.\n2. Write the first sentence of it.\n3. How many teeth does an adult have?",
        [[0, 1], [2]],
    ),
    (
        "en",
        "1. What is 12 squared?\n2. Divide the result by 4.\n3. What is the capital of Chile?",
        [[0, 1], [2]],
    ),
    ("zh", "1. 说出一种热带水果。\n2. 它有什么营养？\n3. 地球的年龄是多少？", [[0, 1], [2]]),
    (
        "ko",
        "1. 유명한 화가 한 명을 말해 주세요.\n2. 그의 대표작은 무엇인가요?\n3. 빛의 속도는 얼마인가요?",
        [[0, 1], [2]],
    ),
]:
    hold2(lang, "dependent", text, groups)

for lang, text, n, pre in [
    (
        "en",
        "Policy: refunds are allowed within 30 days with a receipt; store credit after that.\n\n1. Can I get a refund after 20 days?\n2. What happens after 30 days?",
        2,
        "refunds",
    ),
    (
        "ja",
        "会議メモ：次回の会議は金曜日の10時、場所は第二会議室です。\n\n1. 次回の会議はいつですか？\n2. 場所はどこですか？",
        2,
        "会議",
    ),
]:
    hold2(lang, "shared", text, [[i] for i in range(n)], preamble=pre)

HOLDOUT2.write_text(
    "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in held2), encoding="utf-8"
)
print(f"{len(held2)} second held-out prompts written to {HOLDOUT2}")
