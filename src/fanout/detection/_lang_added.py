"""The languages added for issue 27, read word by word (see ``_lang``): Italian,
Portuguese, Turkish, Russian, Arabic, Hindi and Hinglish (Hindi in Latin letters)."""

from __future__ import annotations

import re

from ._classes import Latin
from ._classes import word_set as _set
from ._lang_west import EN

__all__ = ["AR", "HI", "HIEN", "IT", "PT", "RU", "TR"]

_NEVER = re.compile(r"(?!x)x")

IT = Latin(
    code="it",
    function=_set(
        "il lo la i gli le l un uno una del dello della dei degli delle al allo alla ai agli alle dal "
        "dalla dai nel nella nei negli nelle sul sulla sui questo questa questi queste quello quella "
        "quelli quelle mio mia miei mie tuo tua nostro nostra io tu noi voi mi ti si ci vi ne che chi "
        "cosa come dove quando perché quale quali quanto quanta quanti quante di a da in con su per "
        "tra fra e ed o ma se non più meno molto anche è sono era erano fu stato stata essere ha hanno "
        "aveva avere può possono puoi devo deve fa fare c dell nell all sull dall un"
    ),
    pronouns={
        **dict.fromkeys(["lui", "lei", "suo", "sua", "suoi", "sue"], "x"),
        **dict.fromkeys(["loro"], "pl"),
        **dict.fromkeys(["esso", "essa", "ciò", "lì", "là"], "t"),
    },
    possessive=_set("suo sua suoi sue loro"),
    person_wh=_set("chi qualcuno persona"),
    determiners=_set(
        "il lo la i gli le l un uno una del dello della dei degli delle questo questa questi queste "
        "quel quello quella quei quelle mio mia tuo tua suo sua nostro nostra loro quale quali ogni "
        "due tre alcuni alcune"
    ),
    definite=_set("il lo la i gli le l del dello della dei degli delle al allo alla nel nella"),
    demonstrative=_set("questo questa questi queste quel quello quella quei quelle quegli"),
    introducing=_set("un uno una quale quali alcuni alcune due tre"),
    auxiliaries=_set("è sono era fu ha hanno può deve sta"),
    boundaries=_set("e ed ma o perché quando se mentre poi dopo prima"),
    expletive=_NEVER,
    demo_pronoun=re.compile(
        r"\b(?:questo|quello|ciò)\b(?=\s*(?:[?.!,;:]|$|(?:è|era|significa|vuol|funziona|costa)\b))",
        re.IGNORECASE,
    ),
    generic=_set("risultato risposta numero parola nome titolo somma valore scelta suggerimento"),
    restrictive=_set("di del della per"),
    ellipsis=re.compile(
        r"^\W*(?:e|o|anche|e invece|e per|lo stesso per|che mi dici di)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:ordina|classifica|confronta|paragona|raggruppa)\b|\bquale\s+(?:di\s+queste|di\s+questi|"
        r"tra)\b|\bscegli\b[^.?!\n]{0,30}\b(?:una?|la migliore|il migliore|tra)\b|"
        r"\b(?:la stessa|lo stesso) (?:parola|risposta|numero)\b|"
        r"\bin (?:due|tre|quattro|cinque|\d+) (?:parti|sezioni|capitoli|strofe)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:scrivi|scrivimi|componi|crea|inventa|racconta|raccontami)\b (?:un|una|uno)\b"
        r"(?![^.?!\n]{0,20}\brisposta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:ogni|ognuna|ognuno|ciascuna|ciascuno|separatamente|singolarmente|rispettivamente)\b",
        re.IGNORECASE,
    ),
)

PT = Latin(
    code="pt",
    function=_set(
        "o a os as um uma uns umas do da dos das no na nos nas ao aos à às pelo pela este esta estes "
        "estas esse essa esses essas aquele aquela meu minha teu tua nosso nossa eu tu você vocês me te "
        "se lhe lhes que quem qual quais quando onde como quanto quanta quantos quantas porque por para "
        "de em com sem sobre entre até desde e ou mas não sim mais menos muito também é são era eram foi "
        "foram ser está estão estava há tem têm pode podem posso deve faz"
    ),
    pronouns={
        **dict.fromkeys(["ele", "ela", "dele", "dela", "seu", "sua", "seus", "suas"], "x"),
        **dict.fromkeys(["eles", "elas", "deles", "delas"], "pl"),
        **dict.fromkeys(["isso", "isto", "aquilo", "lá", "ali", "aí", "nisso", "disso"], "t"),
    },
    possessive=_set("seu sua seus suas"),
    person_wh=_set("quem alguém pessoa"),
    determiners=_set(
        "o a os as um uma uns umas este esta estes estas esse essa esses essas aquele aquela meu minha "
        "seu sua nosso nossa qual quais cada dois duas três alguns algumas"
    ),
    definite=_set("o a os as do da dos das no na nos nas ao aos pelo pela"),
    demonstrative=_set("este esta estes estas esse essa esses essas aquele aquela aqueles aquelas"),
    introducing=_set("um uma uns umas qual quais alguns algumas dois duas três"),
    auxiliaries=_set("é são foi era está estão tem pode deve"),
    boundaries=_set("e mas ou porque quando se enquanto embora depois antes pois"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("resultado resposta número palavra nome título soma valor escolha sugestão"),
    restrictive=_set("de do da para"),
    ellipsis=re.compile(r"^\W*(?:e|ou|também|e quanto a|o mesmo para)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:ordene|ordena|classifique|classifica|compare|compara|agrupe)\b|"
        r"\bqual\s+(?:destas|destes|delas|deles)\b|"
        r"\b(?:escolha|escolhe)\b[^.?!\n]{0,30}\b(?:uma?|a melhor|o melhor|entre)\b|"
        r"\b(?:a mesma|o mesmo) (?:palavra|resposta|número)\b|"
        r"\bem (?:duas|dois|três|quatro|cinco|\d+) (?:partes|seções|capítulos|estrofes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:escreva|escreve|crie|cria|invente|inventa|componha|conte|redija)\b(?:-me)? (?:um|uma)\b"
        r"(?![^.?!\n]{0,20}\bresposta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:cada|separadamente|individualmente|respectivamente)\b", re.IGNORECASE
    ),
)

TR = Latin(
    code="tr",
    function=_set(
        "bu şu o bir ve veya ile için gibi kadar daha en çok az mı mi mu mü mısın misin musun müsün "
        "mıdır midir mudur müdür ne neden niçin nasıl kim kimin kime kimi nerede nereye nereden hangi "
        "hangisi kaç nedir kimdir nerededir neresi var yok değil da de ki ama fakat çünkü eğer ise "
        "olan olarak olur oldu olmak bana beni benim sen seni senin biz bizim siz sizin lütfen zaman "
        "ayrıca peki"
    ),
    pronouns={
        **dict.fromkeys(["o", "onu", "ona", "onun", "ondan", "onda", "onunla"], "x"),
        **dict.fromkeys(["onlar", "onları", "onlara", "onların", "onlardan"], "pl"),
        **dict.fromkeys(
            [
                "bunu",
                "buna",
                "bunun",
                "bundan",
                "şunu",
                "orada",
                "oraya",
                "oradan",
                "orası",
                "orayı",
            ],
            "t",
        ),
    },
    possessive=_set("onun onların"),
    person_wh=_set("kim kimin kimi kime birisi kişi"),
    determiners=_set("bu şu o bir hangi her iki üç bazı birkaç"),
    definite=frozenset(),
    demonstrative=_set("bu şu"),
    introducing=_set("bir hangi iki üç bazı birkaç"),
    auxiliaries=frozenset(),
    boundaries=_set("ve ama veya fakat çünkü eğer ki sonra önce"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("sonuç cevap yanıt sayı kelime isim ad başlık toplam değer seçim öneri"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:peki|ya|ve|bir de)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:sırala|sıralayın|karşılaştır|karşılaştırın|kıyasla|sınıflandır|grupla)\b|"
        r"\baynı (?:kelime|cevap|sayı)\b|\b(?:iki|üç|dört|beş|\d+) (?:bölüm|kısım|parça)",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\bbir (?:hikaye|hikâye|şiir|masal|yazı|mektup|makale)\b[^.?!\n]{0,20}\b(?:yaz|oluştur|uydur)",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"\b(?:her biri|ayrı ayrı|tek tek|sırasıyla)\b", re.IGNORECASE),
)

RU = Latin(
    code="ru",
    function=_set(
        "и в во не на с со что как а то все так но да ты к у же вы за бы по только мне было вот от "
        "меня нет о об из теперь когда даже ну ли если уже или ни быть был до вас нибудь опять уж "
        "вам ведь потом себя ничего может тут где есть надо для мы тебя чем была сам чтоб без будто "
        "чего раз тоже себе под будет ж тогда кто этот того потому совсем здесь один почти мой тем "
        "чтобы сейчас были куда зачем всех никогда можно при два другой хоть после над больше тот "
        "через нас про всего какая много разве три эту моя впрочем хорошо свою перед иногда лучше "
        "чуть том нельзя такой более всегда конечно всю между такое какие какой какое сколько "
        "почему каков какова каково каковы объясни расскажи назови напиши дай скажи пожалуйста ещё "
        "еще также самый самая самое самые"
    ),
    pronouns={
        **dict.fromkeys(
            [
                "он",
                "его",
                "него",
                "ему",
                "нему",
                "ним",
                "нём",
                "нем",
                "она",
                "её",
                "ее",
                "неё",
                "нее",
                "ей",
                "ней",
                "нею",
                "ею",
                "оно",
            ],
            "x",
        ),
        **dict.fromkeys(["они", "их", "них", "им", "ими", "ними"], "pl"),
        **dict.fromkeys(["там", "туда", "оттуда", "этого", "этому", "этим"], "t"),
    },
    possessive=_set("его её ее их"),
    person_wh=_set("кто кого кому кем ком чей чья чьё чьи человек"),
    determiners=_set(
        "этот эта это эти тот та те мой моя мое мои твой наш ваш какой какая какое какие который "
        "которая каждый два три несколько"
    ),
    definite=frozenset(),
    demonstrative=_set("этот эта эти этой этих тот та те той тех данный данная"),
    introducing=_set("какой какая какое какие который которая один одна одно два три несколько"),
    auxiliaries=_set("был была было были будет есть"),
    boundaries=_set("и а но или потому когда если пока хотя после перед чтобы"),
    expletive=_NEVER,
    demo_pronoun=re.compile(
        r"(?<![\w-])(?:это|этот|эта|эти)(?![\w-])(?=\s*(?:[?.!,;:]|$|(?:значит|означает|стоит|работает|"
        r"такое)(?![\w-])))",
        re.IGNORECASE,
    ),
    generic=_set("результат ответ число слово название имя сумма значение выбор вариант"),
    restrictive=frozenset(),
    ellipsis=re.compile(
        r"^\W*(?:а|и|или|а как насчёт|а как насчет|а что насчёт|то же самое)(?![\w-])",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"(?:расставь|упорядочь|отсортируй|сравни|сравните|классифицируй|сгруппируй)|"
        r"(?:одним и тем же|одно и то же) (?:словом|слово)|(?:в|из) (?:двух|трёх|трех|четырёх|\d+) "
        r"(?:частях|частей|разделах)",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"(?:напиши|сочини|придумай|составь)(?: мне)? (?:рассказ|историю|стихотворение|сказку|письмо|"
        r"статью|эссе)",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"(?:кажд\w+|по отдельности|отдельно|по очереди)", re.IGNORECASE),
)

AR = Latin(
    code="ar",
    function=_set(
        "ما ماذا لماذا كيف من متى أين كم هل أي هو هي هم هما هن أنا أنت أنتم نحن في على إلى الى عن "
        "مع أو أم ثم لكن لا لم لن قد كان كانت يكون تكون هذا هذه ذلك تلك هؤلاء الذي التي الذين كل بعض "
        "غير بين عند حتى إذا اذا إن أن ان أنه هناك هنا يا شيء أكثر أقل جدا جداً أيضا أيضاً عدد اشرح "
        "اذكر اكتب أعطني قل لو سمحت فضلك يمكن يمكنك ممكن وما وكيف ومن ومتى وأين وكم وهل ولماذا وماذا "
        "تبلغ يبلغ"
    ),
    pronouns={
        **dict.fromkeys(
            [
                "هو",
                "هي",
                "فيه",
                "منه",
                "عنه",
                "له",
                "به",
                "عليه",
                "إليه",
                "معه",
                "لديه",
                "فيها",
                "منها",
                "عنها",
                "لها",
                "بها",
                "عليها",
                "إليها",
                "معها",
                "لديها",
            ],
            "x",
        ),
        **dict.fromkeys(["هم", "هما", "هن", "لهم", "بهم", "فيهم", "منهم", "عنهم", "عليهم"], "pl"),
        **dict.fromkeys(["هناك"], "t"),
    },
    possessive=frozenset(),
    person_wh=_set("من شخص أحد"),
    determiners=_set("هذا هذه ذلك تلك أي كل بعض"),
    definite=frozenset(),
    demonstrative=_set("هذا هذه ذلك تلك"),
    introducing=_set("أي بعض"),
    auxiliaries=_set("كان كانت"),
    boundaries=_set("لكن أو ثم لأن عندما إذا"),
    expletive=re.compile(
        r"(?:^|\s)و?(?:ما|من|ماذا|أين|كيف|متى)\s+(?:هو|هي|هم|هما|هن)(?=\s|$|[؟?])|(?:^|\s)هل\s+هناك"
    ),
    demo_pronoun=re.compile(r"(?:^|\s)(?:هذا|هذه|ذلك|تلك)(?=\s*(?:[؟?.!،,]|$))"),
    generic=_set("النتيجة الجواب الإجابة الرقم الكلمة الاسم العنوان المجموع القيمة"),
    restrictive=frozenset(),
    ellipsis=re.compile(
        r"^\W*(?:و(?=(?:ما|ماذا|كيف|من|متى|أين|كم|هل|لماذا|أي)(?:\s|$))|أو|ماذا عن|وماذا عن)"
    ),
    frame_whole=re.compile(r"رتب|رتّب|قارن|صنف|صنّف|نفس الكلمة|بكلمة واحدة"),
    frame_work=re.compile(r"اكتب (?:قصة|قصيدة|مقالا|مقالاً|رسالة)"),
    distributive=re.compile(r"كل (?:سؤال|واحد|واحدة)|على حدة|بشكل منفصل"),
)

HI = Latin(
    code="hi",
    function=_set(
        "क्या क्यों कैसे कौन कौनसा कौन-सा कब कहाँ कहां कितना कितनी कितने किस किसने किसका किसकी किसके "
        "किसे है हैं था थी थे हो होता होती होते हुआ हुई हुए का की के में से को ने पर और या लेकिन भी तो "
        "ही एक मैं मेरा मेरी मेरे तुम आप हम हमारा अपना अपनी अपने कर करें करो करना करते करती जाता जाती "
        "सकता सकती सकते चाहिए कृपया बताइए बताओ बताएं समझाइए लिए साथ बहुत कुछ नहीं सबसे"
    ),
    pronouns={
        **dict.fromkeys(
            ["वह", "वो", "उसका", "उसकी", "उसके", "उसे", "उसने", "उससे", "उसमें", "उस", "उसको"], "x"
        ),
        **dict.fromkeys(["वे", "उनका", "उनकी", "उनके", "उन्हें", "उन्होंने", "उनसे", "उन"], "pl"),
        **dict.fromkeys(
            [
                "यह",
                "ये",
                "इसका",
                "इसकी",
                "इसके",
                "इसे",
                "इसमें",
                "इससे",
                "इसने",
                "इस",
                "वहाँ",
                "वहां",
                "यहाँ",
            ],
            "t",
        ),
    },
    possessive=_set("उसका उसकी उसके उनका उनकी उनके इसका इसकी इसके"),
    person_wh=_set("कौन किसने किसका किसकी किसके किसे किसको कोई व्यक्ति"),
    determiners=_set("एक कौनसा कौन-सा किस हर दो तीन कुछ"),
    definite=frozenset(),
    demonstrative=frozenset(),
    introducing=_set("एक कौनसा कौन-सा किस कौन दो तीन कुछ"),
    auxiliaries=_set("है हैं था थी थे"),
    boundaries=_set("और लेकिन या क्योंकि जब अगर तो फिर"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("परिणाम उत्तर जवाब संख्या शब्द नाम शीर्षक योग"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:और|या|तथा)(?=\s)"),
    frame_whole=re.compile(r"क्रम में|क्रमबद्ध|तुलना|वर्गीकृत|एक ही शब्द|(?:दो|तीन|चार) भागों में"),
    frame_work=re.compile(r"(?:कहानी|कविता|निबंध|लेख|पत्र) (?:लिखिए|लिखो|लिखें)"),
    distributive=re.compile(r"प्रत्येक|हर एक|अलग-अलग|अलग अलग|एक-एक"),
)

HIEN = Latin(
    code="hi-en",
    function=_set(
        "kya kyu kyun kyon kaise kaisa kaisi kaun kab kahan kaha kitna kitni kitne kis kisne kiska kiski "
        "kiske kisko hai hain tha thi the ho hota hoti hote hua hui hue ka ki ke me mein mai se ko ne "
        "par pe aur ya lekin bhi to toh hi ek main mera meri mere tum aap hum hamara apna apni apne kar "
        "karo karna karte karti karta jata jati sakta sakti sakte chahiye please batao bataiye bata "
        "samjhao samjhaiye liye sath saath bahut kuch nahi nahin bhai yaar bro best konsa kaunsa wala "
        "wali wale"
    )
    | EN.function,
    pronouns={
        **dict.fromkeys(
            [
                "wo",
                "woh",
                "vo",
                "voh",
                "uska",
                "uski",
                "uske",
                "usko",
                "use",
                "usne",
                "usse",
                "usme",
                "uspe",
            ],
            "x",
        ),
        **dict.fromkeys(["unka", "unki", "unke", "unko", "unhe", "unhone", "unse"], "pl"),
        **dict.fromkeys(
            [
                "ye",
                "yeh",
                "iska",
                "iski",
                "iske",
                "isko",
                "ise",
                "isme",
                "ispe",
                "isse",
                "waha",
                "wahan",
                "vaha",
                "vahan",
            ],
            "t",
        ),
    },
    possessive=_set("uska uski uske unka unki unke iska iski iske"),
    person_wh=_set("kaun kisne kiska kiski kiske kisko koi"),
    determiners=_set("ek kaunsa konsa har do teen kuch"),
    definite=frozenset(),
    demonstrative=frozenset(),
    introducing=_set("ek kaunsa konsa kaun do teen kuch"),
    auxiliaries=_set("hai hain tha thi the"),
    boundaries=_set("aur lekin ya kyunki jab agar toh phir"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("result answer jawab number word naam title"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:aur|ya|or|and)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:rank|sort|compare|order)\b|\bsame (?:word|answer)\b|\bek hi (?:word|shabd|answer)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:story|kahani|poem|kavita|essay|letter)\b[^.?!\n]{0,20}\b(?:likho|likhiye|likh do|banao)\b",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"\b(?:har ek|alag alag|alag-alag|each|separately)\b", re.IGNORECASE),
)
